"""Which torch device a job runs on: a GPU of its own if there are GPUs, else MPS, else CPU.

A scheduler that hands a job its GPUs (SLURM) sets CUDA_VISIBLE_DEVICES; the job uses the
first GPU it sees. Snakemake running several jobs on one machine tells them nothing, so each
job claims a free GPU: it locks a per-GPU file in the temporary folder (an flock, released
when the process ends, also when it crashes). With `resources: gpu: N` in the profile at
most N jobs run at once, so a free GPU exists; if other processes hold them all, the job
shares one rather than wait. BENIGN_DEVICE (e.g. "cpu", "cuda:1") overrides the choice.
"""

from __future__ import annotations

import fcntl
import os
import resource
import sys
import tempfile
from pathlib import Path
from typing import IO

import torch

_claimed: dict[int, IO] = {}  # GPU index -> its open lock file (closing it frees the GPU)


def pick_device(preferred: str | None = None) -> torch.device:
    """The device this process should compute on (see the module docstring); ``preferred``
    (e.g. from a command-line flag) wins over everything."""
    forced = preferred or os.environ.get("BENIGN_DEVICE")
    if forced and forced != "auto":
        return torch.device(forced)
    if torch.cuda.is_available():
        return torch.device("cuda", claim_gpu(torch.cuda.device_count()))
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def claim_gpu(count: int, lock_dir: Path | None = None) -> int:
    """Index of a GPU for this process among the `count` visible ones."""
    if "SLURM_JOB_ID" in os.environ or count == 1:
        return 0
    if _claimed:
        return next(iter(_claimed))
    # name the lock after the physical GPU, so runs restricted to different GPUs never collide
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")
    names = visible if len(visible) == count and all(visible) else [str(i) for i in range(count)]
    lock_dir = lock_dir or Path(tempfile.gettempdir())
    for index, name in enumerate(names):
        handle = open(lock_dir / f"benign-gpu-{name}.lock", "w")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        _claimed[index] = handle
        return index
    return os.getpid() % count


def peak_memory_mb(device: torch.device | str) -> tuple[float, float]:
    """(maximum resident set size of this process so far, maximum memory allocated on ``device``
    if it is a CUDA device else nan), in MB: what a job really needed, for its runs table."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    rss_mb = rss / 2**20 if sys.platform == "darwin" else rss / 2**10  # bytes on macOS, KiB on Linux
    device = torch.device(device)
    cuda_mb = torch.cuda.max_memory_allocated(device) / 2**20 if device.type == "cuda" else float("nan")
    return rss_mb, cuda_mb
