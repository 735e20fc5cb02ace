"""Shared helpers of the benchmark suite: timing, machine description, peak memory, results."""

from __future__ import annotations

import json
import os
import platform
import re
import resource
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
BY_CPU = RESULTS / "cpu"


class Skip(RuntimeError):
    """A benchmark that cannot run here (a missing asset or tool); recorded, not a failure."""


@dataclass
class Context:
    """What a benchmark is asked to do: quick (small sizes, only checks that it runs) or real."""

    device: torch.device
    threads: int
    quick: bool
    out: Path
    extra: dict = field(default_factory=dict)

    @property
    def cuda(self) -> bool:
        return self.device.type == "cuda"


def sync(device: torch.device | str | None = None) -> None:
    if torch.cuda.is_available() and (device is None or torch.device(device).type == "cuda"):
        torch.cuda.synchronize()


class Timer:
    """Wall and process CPU time of a block (CUDA work is waited for)."""

    def __init__(self, device=None) -> None:
        self.device = device
        self.wall = self.cpu = 0.0

    def __enter__(self) -> Timer:
        sync(self.device)
        self._w, self._c = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc) -> None:
        sync(self.device)
        self.wall = time.perf_counter() - self._w
        self.cpu = time.process_time() - self._c

    def as_dict(self) -> dict:
        return {"wall_s": round(self.wall, 4), "cpu_s": round(self.cpu, 4)}


@contextmanager
def timed(device=None):
    t = Timer(device)
    with t:
        yield t


def machine(ctx: Context) -> dict:
    info = {
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "torch_version": torch.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "processor": _cpu_model(),
        "vector_isa": _vector_isa(),
        "device": str(ctx.device),
        "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()],
    }
    if os.environ.get("BENCHMARK_NOTE"):  # how this machine differs from a plain install, if it does
        info["note"] = os.environ["BENCHMARK_NOTE"]
    if ctx.cuda:
        info["cuda_device"] = torch.cuda.get_device_name(ctx.device)
        info["cuda_version"] = torch.version.cuda
    return info


def _vector_isa() -> str:
    """The widest x86 vector extension the CPU reports: a speed measured on one is not another's."""
    try:
        flags = next(
            line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags")
        ).split()
    except (OSError, StopIteration):
        return platform.machine()
    return "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"


def cpu_kind(machine: dict) -> str:
    """A folder name for the machine's CPU kind: its model name and widest vector instructions
    (one model name covers CPUs with and without AVX-512)."""
    name = f"{machine.get('processor', 'cpu')} {machine.get('vector_isa', '')}".lower()
    name = re.sub(r"\(r\)|\(tm\)|processor|cpu @.*|\d+-core", " ", name)
    return "-".join(re.findall(r"[a-z0-9]+", name))


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def peak_memory(ctx: Context) -> dict:
    """Peak resident memory of this process (the benchmark runs in its own process)."""
    out = {"ru_maxrss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    if ctx.cuda:
        out["cuda_max_memory_allocated_mb"] = round(torch.cuda.max_memory_allocated(ctx.device) / 2**20, 1)
    return out


def write_result(path: Path, result: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=2, sort_keys=False, default=_jsonable) + "\n")
    os.replace(tmp, path)


def _jsonable(x):
    if hasattr(x, "item"):
        return x.item()
    if hasattr(x, "tolist"):
        return x.tolist()
    return str(x)


def target(metric: str, op: str, value: float, measured: float) -> dict:
    met = measured >= value if op == ">=" else measured <= value
    return {"metric": metric, "op": op, "value": value, "measured": measured, "met": bool(met)}


def extrapolate(timing: dict, steps: int, evals: int) -> float:
    """Price a run of ``steps`` steps and ``evals`` evaluations from a timed prefix:
    setup + steps * (mean step) + evals * (mean evaluation)."""
    per_step = timing["train_s"] / max(timing["steps"], 1)
    per_eval = timing["eval_s"] / max(timing["evals"], 1)
    return timing["setup_s"] + steps * per_step + evals * per_eval


def rounded(d: dict, digits: int = 4) -> dict:
    return {k: (round(v, digits) if isinstance(v, float) else v) for k, v in d.items()}
