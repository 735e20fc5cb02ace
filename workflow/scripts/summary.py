"""Rule summary: results/summary.md, the run's numbers beside their artifacts, with the commit,
the machine and the job time."""

import os
import platform
import subprocess
import time
from pathlib import Path

import pandas as pd

from benign.core.io import log_to
from benign.core.job_time import measured
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
files = [snakemake.input.job_runs] if isinstance(snakemake.input.job_runs, str) else list(snakemake.input.job_runs)
devices = sorted({d for f in files for d in pd.read_parquet(f, columns=["device"])["device"].dropna().unique()})
header = {
    "commit": commit(),
    "written": time.strftime("%Y-%m-%d %H:%M %Z"),
    "machine": f"{cpu_model()}, {os.cpu_count()} cores, {memory_gib()}; devices of the runs: {', '.join(devices)}",
    "config files": ", ".join(dict.fromkeys(os.path.relpath(f) for f in snakemake.params.configfiles)),
}
summary(
    {Path(p).stem: p for p in snakemake.input.tables}, snakemake.output[0], header, measured(files),
    snakemake.params.forecast,
)  # fmt: skip
