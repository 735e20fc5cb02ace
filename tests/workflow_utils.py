"""Helpers for tests that run the workflow in a temporary copy of the repository."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
IGNORE = shutil.ignore_patterns(".git", ".venv", "results", "logs", "resources", ".snakemake", "__pycache__", ".pytest_cache", "*.egg-info", "benchmarks")


def copy_repo(dest: Path) -> Path:
    """A copy of the working tree without generated files."""
    shutil.copytree(ROOT, dest, ignore=IGNORE)
    return dest


def snakemake(cwd: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "snakemake", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


def planned_jobs(cwd: Path, *args: str) -> dict[str, int]:
    """Rule -> job count of a dry run (empty when there is nothing to do)."""
    out = snakemake(cwd, "-n", *args)
    assert out.returncode == 0, out.stdout + out.stderr
    counts: dict[str, int] = {}
    lines = out.stdout.splitlines()
    if "Job stats:" not in lines:
        return counts
    for line in lines[lines.index("Job stats:") + 3 :]:
        parts = line.split()
        if len(parts) != 2 or parts[0] == "total":
            break
        counts[parts[0]] = int(parts[1])
    return counts


# The smoke workflow's metrics tables (the data behind every figure and table).
TABLES = [f"synthetic/{model}/{name}.parquet" for model in ("token", "encoder") for name in ("runs", "curves", "attention")]
TABLES += ["synthetic/token_projection.parquet"]
_CLEAN_RUNS: dict[str, tuple[Path, float]] = {}


def table_targets() -> list[str]:
    """Targets that build every metrics table (no figures). They go before --configfile,
    which takes every path that follows it."""
    return [f"results/{t}" for t in TABLES]


def clean_table_run(tmp_path_factory, name: str = "reference") -> tuple[Path, float]:
    """The smoke workflow's tables built once per test session in a fresh copy: (repo, seconds).
    Shared by the crash and determinism tests, which both compare against it."""
    if name not in _CLEAN_RUNS:
        repo = copy_repo(tmp_path_factory.mktemp(f"clean-{name}") / "repo")
        start = time.perf_counter()
        out = snakemake(repo, *table_targets(), "--cores", "2", "--configfile", "config/smoke.yaml")
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
        _CLEAN_RUNS[name] = (repo, time.perf_counter() - start)
    return _CLEAN_RUNS[name]


def read_tables(repo: Path, drop: tuple[str, ...] = ("wall_time_s",)) -> dict[str, pd.DataFrame]:
    """Every metrics table of a finished run, less the columns that may differ between runs."""
    return {t: pd.read_parquet(repo / "results" / t).drop(columns=list(drop), errors="ignore") for t in TABLES}


def files_under(folder: Path) -> set[str]:
    """Relative paths of every file (hidden ones included) below ``folder``."""
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def processes_in(folder: Path) -> list[int]:
    """Ids of live processes whose working directory is ``folder`` or below it."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cwd = (proc / "cwd").resolve(strict=True)
        except OSError:
            continue
        if cwd == folder or folder in cwd.parents:
            pids.append(int(proc.name))
    return pids
