"""Native CPU matrix products for the encoder's skinny steps (source: ``skinny.cpp``).

One training step of the encoder multiplies 20-row blocks (n samples) by the 2000 x 2000
matrices, forwards (x W) and backwards (g W^T). The BLAS torch ships first copies the large
matrix into a blocked layout, which at 20 rows costs about as much as the product itself;
``skinny.cpp`` reads the matrix once, in place. Measured on the 2-core development machine
(AMD EPYC, float32, one thread, 5 matrices in turn as in a training step), 20 x 2000 x 2000:
x W 1.8-2.5 ms against 2.9-4.0 ms, x W^T 2.3-2.7 ms against 2.9-3.9 ms; one row (the [CLS]
query): 0.65-0.7 ms against 0.8-1.0 ms (`python -m benchmarks --only native_products`).

The kernels are compiled at first use with the machine's C++ compiler (``-march=native``) into a
per-user cache keyed by the source, the compiler and the CPU, and used only where
:func:`applies` holds, i.e. where they measured faster: CPU, float32, one torch thread, at most
``MAX_ROWS`` rows, and a large matrix: for x W at least ``MIN_NN`` entries with rows of a whole
number of 64-byte lines (the kernel's vector loads are then aligned; d 2000 is, d 500 is not),
for x W^T at least ``MIN_NT`` entries (smaller ones stay in cache and the BLAS is as fast).
Everywhere else, and where no compiler is found or ``BENIGN_NATIVE=0``, torch's own product is used. Each
output is summed in an order fixed by the shapes, so a run is reproducible; it differs from the
BLAS in float32 rounding only.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import torch

log = logging.getLogger("benign.native")

SOURCE = Path(__file__).with_name("skinny.cpp")
MAX_ROWS = 64  # more rows than this and the BLAS's packing pays for itself
MIN_NN = 250_000  # entries of the large matrix for x W (1 MB in float32)
MIN_NT = 1_000_000  # and for x W^T (4 MB)

_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_tried = False


def enabled() -> bool:
    return os.environ.get("BENIGN_NATIVE", "1") != "0"


def compiler() -> str | None:
    """The C++ compiler: $CXX, else g++, c++ or clang++ on the PATH."""
    cxx = os.environ.get("CXX")
    if cxx:
        return shutil.which(cxx) or cxx
    for name in ("g++", "c++", "clang++"):
        path = shutil.which(name)
        if path:
            return path
    return None


def cache_dir() -> Path:
    """$BENIGN_NATIVE_CACHE, else $XDG_CACHE_HOME/benign/native (~/.cache/benign/native)."""
    if os.environ.get("BENIGN_NATIVE_CACHE"):
        return Path(os.environ["BENIGN_NATIVE_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "benign" / "native"


def _cpu_signature() -> str:
    """Model name and feature flags: a library built with -march=native runs only on such a CPU."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        import platform

        return platform.machine() + platform.processor()
    keep = [ln for ln in lines if ln.split(":")[0].strip() in ("model name", "flags", "Features", "CPU part")]
    return "\n".join(sorted(set(keep)))


def _build(cxx: str, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".so.tmp")
    os.close(fd)
    base = [cxx, "-std=c++17", "-O3", "-shared", "-fPIC", str(SOURCE), "-o", tmp]
    try:
        err = ""
        for arch in (["-march=native"], []):  # some compilers lack -march=native
            proc = subprocess.run(base[:1] + arch + base[1:], capture_output=True, text=True)
            if proc.returncode == 0:
                os.replace(tmp, target)  # atomic: concurrent jobs each build and rename
                return
            err = proc.stderr
        raise RuntimeError(f"{cxx} failed to build {SOURCE.name}:\n{err[-2000:]}")
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def library() -> ctypes.CDLL | None:
    """The compiled kernels, building them on first use; None where they cannot be had."""
    global _lib, _tried
    if not enabled():
        return None
    if _tried:  # built or given up on: no lock needed (called for every product)
        return _lib
    with _lock:
        if _tried:
            return _lib
        _tried = True
        cxx = compiler()
        if cxx is None:
            log.info("no C++ compiler found: using torch's matrix products")
            return None
        try:
            version = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout
            key = hashlib.sha256(SOURCE.read_bytes() + version.encode() + _cpu_signature().encode()).hexdigest()[:16]
            target = cache_dir() / f"skinny-{key}.so"
            if not target.exists():
                try:
                    _build(cxx, target)
                except PermissionError:
                    target = Path(tempfile.gettempdir()) / f"benign-native-{os.getuid()}" / target.name
                    if not target.exists():
                        _build(cxx, target)
            lib = ctypes.CDLL(str(target))
        except (OSError, RuntimeError) as err:
            log.warning("native kernels unavailable (%s): using torch's matrix products", err)
            return None
        i64, i32, ptr = ctypes.c_int64, ctypes.c_int, ctypes.c_void_p
        strides = [i32, i32, i32, i32, ptr, i64, i64, ptr, i64, i64, ptr, i64, i64]
        lib.skinny_nn.argtypes = strides + [ptr]
        lib.skinny_nt.argtypes = strides + [ptr]
        lib.skinny_scratch_floats.argtypes = [i32, i32, i32]
        lib.skinny_scratch_floats.restype = i64
        _lib = lib
        return _lib


def reset() -> None:
    """Forget the loaded library (tests: rebuild after changing the environment)."""
    global _lib, _tried
    with _lock:
        _lib, _tried = None, False


def applies(x: torch.Tensor, W: torch.Tensor, transposed: bool) -> bool:
    """Whether x W (W^T if ``transposed``) goes to the native kernel: batched 3-D float32 CPU
    tensors with unit stride along rows, one torch thread, few rows, a large matrix."""
    if x.dim() != 3 or W.dim() != 3 or x.shape[0] != W.shape[0] or x.stride(-1) != 1 or W.stride(-1) != 1:
        return False
    if not (x.dtype == W.dtype == torch.float32 and x.device.type == W.device.type == "cpu"):
        return False
    if x.shape[1] > MAX_ROWS:
        return False
    if transposed:
        large = W.shape[1] * W.shape[2] >= MIN_NT
    else:
        large = W.shape[1] * W.shape[2] >= MIN_NN and W.stride(1) % 16 == 0 and W.data_ptr() % 64 == 0
    return large and torch.get_num_threads() == 1 and library() is not None


def matmul(
    x: torch.Tensor, W: torch.Tensor, transposed: bool = False, low_rank: tuple[torch.Tensor, torch.Tensor] | None = None
) -> torch.Tensor:
    """x W, or x W^T with ``transposed``, batched: (B, M, K) times (B, K, N) (or (B, N, K)),
    by the native kernels where :func:`applies`, else by torch. With ``low_rank`` = (E, F),
    (B, M, r) and (B, r, N), E F is added."""
    if applies(x, W, transposed):
        out = native_matmul(x, W, transposed)
    else:
        out = torch.bmm(x, W.transpose(1, 2) if transposed else W)
    return out if low_rank is None else out.baddbmm_(*low_rank)


def native_matmul(x: torch.Tensor, W: torch.Tensor, transposed: bool = False) -> torch.Tensor:
    """:func:`matmul` by the native kernels whatever the sizes (float32 CPU tensors with unit
    stride along rows; the library must be available)."""
    lib = library()
    if lib is None:
        raise RuntimeError("the native kernels are not available (see the log)")
    B, M, K = x.shape
    N = W.shape[1] if transposed else W.shape[2]
    if W.shape[0] != B or (W.shape[2] if transposed else W.shape[1]) != K:
        raise ValueError(f"shapes {tuple(x.shape)} and {tuple(W.shape)} do not multiply (transposed={transposed})")
    if not (x.dtype == W.dtype == torch.float32 and x.stride(-1) == 1 and W.stride(-1) == 1):
        raise ValueError("native products take float32 tensors with unit stride along rows")
    out = torch.empty(B, M, N, dtype=x.dtype)
    args = (B, M, N, K, x.data_ptr(), x.stride(1), x.stride(0), W.data_ptr(), W.stride(1), W.stride(0))
    args += (out.data_ptr(), out.stride(1), out.stride(0))
    scratch = torch.empty(lib.skinny_scratch_floats(M, N, K), dtype=torch.float32)
    (lib.skinny_nt if transposed else lib.skinny_nn)(*args, scratch.data_ptr())
    return out
