"""Rule summary: results/summary.md, the run's numbers beside their artifacts, with the commit,
the machine and the job time."""

import os
import platform
import subprocess
import time
from pathlib import Path

import pandas as pd

from benign.core.io import log_to
from benign.tables.summary import summary


def cpu_model() -> str:
    """The CPU's name and its widest vector instructions (a speed path differs between them)."""
    info = Path("/proc/cpuinfo")
    if not info.exists():
        return platform.processor() or platform.machine()
    text = info.read_text()
    name = next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("model name")), "")
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
    vector = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    return f"{name or platform.machine()} with {vector}"


def memory_gib() -> str:
    info = Path("/proc/meminfo")
    if info.exists():
        kib = int(info.read_text().split("MemTotal:", 1)[1].split()[0])
        return f"{kib / 2**20:.0f} GiB"
    return "unknown"


def commit() -> str:
    def git(*args):
        out = subprocess.run(["git", *args], capture_output=True, text=True)  # in the workflow's directory
        return out.stdout.strip() if out.returncode == 0 else ""

    head = git("rev-parse", "--short", "HEAD")
    if not head:
        return "not a git checkout"
    return head + (" (with uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") else "")


log_to(snakemake.log[0])
halves = {"synthetic half": snakemake.input.synthetic_runs, "real half": snakemake.input.real_runs}
runs = {
    half: [
        pd.read_parquet(p, columns=["wall_time_s", "device"]) for p in ([paths] if isinstance(paths, str) else paths)
    ]
    for half, paths in halves.items()
}
devices = sorted({d for frames in runs.values() for f in frames for d in f["device"].dropna().unique()})
header = {
    "commit": commit(),
    "written": time.strftime("%Y-%m-%d %H:%M %Z"),
    "machine": f"{cpu_model()}, {os.cpu_count()} cores, {memory_gib()}; devices of the runs: {', '.join(devices)}",
    "config files": ", ".join(dict.fromkeys(os.path.relpath(f) for f in snakemake.params.configfiles)),
}
seconds = {half: float(sum(f["wall_time_s"].sum() for f in frames)) for half, frames in runs.items() if frames}
summary(
    {Path(p).stem: p for p in snakemake.input.tables}, snakemake.output[0], header, seconds, snakemake.params.forecast
)
