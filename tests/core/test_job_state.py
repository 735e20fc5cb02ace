"""A training job's finished state outlives the job, and goes only once the workflow has its
outputs (benign.core.job_state)."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from benign.core import job_state, paths
from benign.core.schema import MEASURED
from tests.helpers.workflow_utils import copy_repo, snakemake


def test_release_removes_only_folders_whose_outputs_all_exist(tmp_path):
    root = tmp_path / "results/.checkpoints"
    for name in ("done", "half", "none"):
        job_state.claim(root / name, [f"out/{name}/a.parquet", f"out/{name}/b.parquet"])
        (root / name / "done-abc").mkdir()
    for path in ("out/done/a.parquet", "out/done/b.parquet", "out/half/a.parquet"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x")
    (root / "unclaimed").mkdir()  # no record of its outputs: never removed
    removed = job_state.release(root, base=tmp_path)
    assert removed == [root / "done"]
    assert sorted(p.name for p in root.iterdir()) == ["half", "none"]  # the empty unclaimed folder goes too
    assert job_state.release(tmp_path / "nothing-here", base=tmp_path) == []


TABLES = paths.tables(paths.SYNTHETIC_JOB, job="token_settings_00")
ARGS = (TABLES["runs"], "--cores", "1", "--configfile", "config/smoke.yaml")


@pytest.mark.slow  # Snakemake on a copy of the repository: beside the end-to-end tests (ci/test.sh)
def test_a_job_whose_outputs_were_removed_after_it_finished_reruns_without_training(tmp_path):
    """SLURM can rule a job TIMEOUT after its last write; Snakemake then removes its outputs and
    retries it. Here the first run ends without its success handler (``--no-hooks``), as a failed
    run does, and the outputs are removed as Snakemake removes them: the rerun writes them from
    the kept state, trains no batch, and the state goes once the run succeeds."""
    repo = copy_repo(tmp_path / "repo")
    first = snakemake(repo, *ARGS, "--no-hooks")
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    state = repo / job_state.ROOT / "token_settings_00"
    assert list(state.glob("done-*")), "the finished state did not outlive the job"
    tables = {name: pd.read_parquet(repo / path) for name, path in TABLES.items()}
    for path in TABLES.values():
        (repo / path).unlink()
    again = snakemake(repo, *ARGS)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    log = (repo / "logs/synthetic/train_token_settings_00.log").read_text()
    assert "already done (kept from an interrupted job)" in log and not re.search(r"training \d+ run", log), log
    for name, expected in tables.items():
        got = pd.read_parquet(repo / TABLES[name])
        drop = [c for c in expected.columns if c in MEASURED]
        pd.testing.assert_frame_equal(got.drop(columns=drop), expected.drop(columns=drop), check_exact=True, obj=name)
    assert not (repo / job_state.ROOT).exists(), "the state outlived the successful run"
