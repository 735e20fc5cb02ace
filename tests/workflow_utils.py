"""Helpers for tests that run the workflow in a temporary copy of the repository."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

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
