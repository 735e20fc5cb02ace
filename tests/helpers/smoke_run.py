"""One local run of the smoke config per test session, shared by the tests that read its results."""

from __future__ import annotations

import functools
import shutil
import time
from pathlib import Path

from tests.helpers.workflow_utils import copy_repo, snakemake

SMOKE = ("--configfile", "config/smoke.yaml")


@functools.cache
def _run(base: Path) -> tuple[Path, float]:
    shutil.rmtree(base / "repo", ignore_errors=True)  # left by an earlier failed attempt
    repo = copy_repo(base / "repo")
    start = time.monotonic()
    # beside the SLURM module's runs on an AVX2-only 2-core CPU this took over 600 s
    out = snakemake(repo, "--cores", "2", *SMOKE, timeout=1800)
    seconds = time.monotonic() - start
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return repo, seconds


def local_smoke_run(tmp_path_factory) -> tuple[Path, float]:
    """A temporary copy of the repository after `snakemake --cores 2` with the smoke config,
    and how many seconds that run took. Treat it as read-only: copy it before changing it."""
    return _run(tmp_path_factory.getbasetemp() / "smoke-local")
