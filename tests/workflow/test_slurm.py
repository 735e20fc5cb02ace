"""The workflow on a real SLURM cluster: jobs go through sbatch, their results equal a local
run's, and a failed job or one past its time limit ends the run with an error, never a hang.

Through SLURM go one training job of each kind of the smoke config (a synthetic job of the
token model, one of the encoder, a real-data cell with its data set's features and phase-1
head), each compared with the same job of the local smoke run; the rest of the smoke config
is the same rules again, and is left to the local run.

Needs a running cluster, e.g. the single-node one of the CI:
    bash ci/slurm-up.sh && .venv/bin/python -m pytest -m slurm -v ; bash ci/slurm-down.sh
Without one, these tests are skipped and say why.
"""

from __future__ import annotations

import re
import signal
from pathlib import Path

import pandas as pd
import pytest
import yaml

from benign.core.schema import MEASURED
from tests.helpers.slurm import CHECKPOINT_EVERY, LONG_JOB, SAMPLE, Run, slurm_jobs
from tests.helpers.smoke_run import local_smoke_run

pytestmark = pytest.mark.slurm


def report(capsys, line: str) -> None:
    with capsys.disabled():
        print(f"\n[slurm] {line}")


@pytest.fixture(scope="module")
def runs(slurm_runs, tmp_path_factory):
    """The SLURM runs started with the session (tests/conftest.py), and the local smoke run."""
    if isinstance(slurm_runs, str):
        pytest.skip(slurm_runs)
    return slurm_runs | {"local": local_smoke_run(tmp_path_factory)}


def test_smoke_jobs_run_through_sbatch(runs, capsys):
    smoke = runs["smoke"].finish()
    assert smoke.returncode == 0, smoke.tail()
    ids = smoke.job_ids()
    assert ids, "no job was submitted to SLURM:\n" + smoke.tail()
    repo = runs["smoke"].cwd
    jobs = slurm_jobs(ids)
    assert set(jobs) == set(ids), f"SLURM does not know jobs {set(ids) - set(jobs)}"
    for job_id, (state, workdir) in jobs.items():
        assert (state, workdir) == ("COMPLETED", str(repo)), job_id
    # every training job ran inside one of those SLURM jobs, not on the submitting machine
    slurm_logs = "\n".join(p.read_text() for p in (repo / ".snakemake/slurm_logs").rglob("*.log"))
    trained = [f"job={p.name}" for p in (repo / "results/synthetic/jobs").iterdir()]
    trained += [f"cell={p.name}" for p in (repo / "results/real/jobs").iterdir()]
    assert any(t.startswith("job=") for t in trained) and any(t.startswith("cell=") for t in trained), trained
    for wildcards in trained:
        assert f"wildcards: {wildcards}\n" in slurm_logs, f"training job {wildcards} is in no SLURM log"
    _, local_seconds = runs["local"]
    report(
        capsys,
        f"{len(SAMPLE)} training jobs of the smoke config and what they need: {smoke.seconds:.0f} s through SLURM "
        f"({len(ids)} submissions); the whole smoke config locally with --cores 2: {local_seconds:.0f} s",
    )


def test_smoke_metrics_equal_local_run(runs):
    assert runs["smoke"].finish().returncode == 0
    local, _ = runs["local"]
    slurm = runs["smoke"].cwd
    tables = sorted(p.relative_to(slurm) for p in (slurm / "results").rglob("*.parquet"))
    assert {str(Path(t).parent) for t in SAMPLE} <= {str(t.parent) for t in tables}, tables
    for table in tables:
        expected = pd.read_parquet(local / table)
        got = pd.read_parquet(slurm / table)
        timing = [c for c in expected.columns if c in MEASURED or c.startswith("wall_time")]
        pd.testing.assert_frame_equal(
            got.drop(columns=timing),
            expected.drop(columns=timing),
            check_exact=False,
            rtol=1e-9,
            atol=0,
            obj=str(table),
        )


def assert_ended_by_slurm_state(run: Run, state: str, capsys, what: str) -> None:
    finished = run.finish()
    assert finished.returncode != -signal.SIGKILL and finished.returncode != 128 + signal.SIGKILL, (
        f"snakemake hung and was killed after {run.kill_after} s:\n" + finished.tail()
    )
    assert finished.returncode != 0, finished.tail()
    ids = finished.job_ids()
    assert len(ids) == 1, finished.tail()
    assert slurm_jobs(ids)[ids[0]][0] == state
    assert not (run.cwd / "never.txt").exists()
    report(capsys, f"{what}: snakemake exited with {finished.returncode} after {finished.seconds:.0f} s")


def test_failing_job_ends_the_run(runs, capsys):
    assert_ended_by_slurm_state(runs["failing"], "FAILED", capsys, "job exiting with 3")


def test_job_over_its_time_limit_ends_the_run(runs, capsys):
    assert_ended_by_slurm_state(runs["over_time"], "TIMEOUT", capsys, "job past its 1 min time limit")


def test_a_job_killed_at_its_time_limit_resumes_on_retry_and_loses_nothing(runs, capsys):
    """The long job's first attempt ends in TIMEOUT (SIGTERM at its 1 min limit), a retry with
    ample time resumes it from the checkpoint the signal made (not from step 0) and completes it:
    every run trained to the last step. That a resumed job's numbers equal an uninterrupted
    run's is shown without SLURM (tests/synthetic/test_checkpoint.py, a SIGTERM at an unplanned
    step; tests/workflow/test_crash_resume.py, the whole smoke build killed three times)."""
    run = runs["time_limit"].finish()
    assert run.returncode == 0, run.tail()
    ids = run.job_ids()
    states = slurm_jobs(ids)
    assert len(ids) >= 2 and states[ids[0]][0] == "TIMEOUT" and states[ids[-1]][0] == "COMPLETED", (states, run.tail())
    assert "runtime=1" in run.output and "runtime=25" in run.output
    repo = runs["time_limit"].cwd
    first = next((repo / ".snakemake/slurm_logs").rglob(f"{ids[0]}.log")).read_text()
    assert "DUE TO TIME LIMIT" in first, first[-3000:]
    # The job's shell may die of the same SIGTERM before the script's exit status 75 reaches
    # Snakemake, so the evidence that the script caught it is its checkpoint: Snakemake clears
    # a job's log before a retry, and the last attempt's log says where it resumed.
    job_log = (repo / "logs/synthetic/train_token_delayed_00.log").read_text()
    resumed = [int(s) for s in re.findall(r"from its checkpoint at step (\d+)", job_log)]
    # a step the signal chose, not a periodic one
    assert any(step % CHECKPOINT_EVERY for step in resumed), job_log[-3000:]
    folder = repo / Path(LONG_JOB).parent
    steps = yaml.safe_load((repo / "config/long.yaml").read_text())["synthetic"]["token"]["delayed"]["steps"]
    table = pd.read_parquet(folder / "runs.parquet")
    assert sorted(table["seed"]) == [1, 2] and (table["status"] == "ok").all(), table
    assert (table["steps"] == steps).all() and (table["iterations"] == steps).all(), table[["steps", "iterations"]]
    curves = pd.read_parquet(folder / "curves.parquet")
    assert (curves.groupby("run_id")["step"].max() == steps).all(), curves.groupby("run_id")["step"].max()
    report(capsys, f"job past its time limit: {len(ids)} attempts, resumed at steps {resumed}, {run.seconds:.0f} s")
