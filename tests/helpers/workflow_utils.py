"""Helpers for tests that run the workflow in a temporary copy of the repository."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd

from benign.core import paths
from benign.core.schema import MEASURED
from benign.synthetic import registry

ROOT = Path(__file__).resolve().parents[2]
IGNORE = shutil.ignore_patterns(
    ".git",
    ".venv",
    "results",
    "logs",
    "resources",
    ".snakemake",
    "__pycache__",
    ".pytest_cache",
    "*.egg-info",
    "benchmarks",
)


def copy_repo(dest: Path, source: Path = ROOT) -> Path:
    """A copy of the working tree (or of another copy, to share its code) without generated files."""
    shutil.copytree(source, dest, ignore=IGNORE)
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


# The metrics tables (the data behind every figure and table) of each half of the workflow.
TABLES = [f"synthetic/{model}/{name}.parquet" for model in registry.MODELS for name in ("runs", "curves", "attention")]
TABLES += ["synthetic/token_projection.parquet"]
TABLES += [paths.fill(paths.LIMIT, table=t).removeprefix("results/") for t in paths.LIMIT_TABLES]  # the atlas's limit
REAL_TABLES = ["real/runs.parquet", "real/attention.parquet"]


def sweep_tables(*configfiles: str) -> list[str]:
    """The sweeps' gathered tables (under results/) that the artifacts of these config files read:
    metrics tables too, of one sweep each."""
    import yaml
    from snakemake.utils import update_config

    from benign.artifacts.entry import Input
    from benign.plan import schema
    from benign.workplan import WorkPlan

    cfg = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    for f in configfiles:
        update_config(cfg, yaml.safe_load((ROOT / f).read_text()))
    plan = WorkPlan.load(cfg, schema.PATH)
    return sorted({
        path.removeprefix("results/")
        for art, model in plan.drawn()
        for spec in art.inputs.values()
        if isinstance(spec, Input) and spec.kind.per_sweep
        for path in plan.input_files(spec, model, None)
    })  # fmt: skip


def table_args(*configfiles: str, tables: list[str] = TABLES) -> list[str]:
    """Snakemake arguments that build these tables (no figures) with these config files.
    The targets go first: --configfile takes every path that follows it."""
    return [*(f"results/{t}" for t in tables), "--cores", "2", "--configfile", *configfiles]


def read_tables(repo: Path, drop: tuple[str, ...] = MEASURED, tables: list[str] = TABLES) -> dict[str, pd.DataFrame]:
    """Tables of a finished run, less the columns that may differ between runs."""
    return {t: pd.read_parquet(repo / "results" / t).drop(columns=list(drop), errors="ignore") for t in tables}


def files_under(folder: Path) -> set[str]:
    """Relative paths of every file (hidden ones included) below ``folder``."""
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def processes_in(folder: Path) -> list[int]:
    """Ids of live processes whose working directory is ``folder`` or below it."""
    folder = folder.resolve()
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
