"""A clean build of every synthetic metrics table of the smoke config, killed three times (kill
-9 of Snakemake and of every job it started) and run again to the end each time, gives the
tables of the session's uninterrupted smoke run: equal, not close, and nothing stray in
results/. The real half is left out: its jobs resume through the same job folders
(``benign.core.job_state``), a stopped phase 2 resumes to the same numbers
(tests/real/test_batched.py), and its tables through SLURM equal the local run's
(tests/workflow/test_slurm.py).

This is also the determinism check: the two builds are separate clean runs of the same code
(the killed one in a copy of the smoke run's tree without its results, data sets, features or
logs, so both run the same code even while the working tree is being edited), so only the
measured columns (``schema.MEASURED``: wall time, peak memory) and the device may differ. The
killed build checkpoints every 50 steps and the smoke run does not, so equal tables also show
that resuming from a checkpoint does not change the numbers.

The kills, in the order the build meets them:

1. as soon as the delayed-generalization job has saved a checkpoint (the build asks Snakemake
   to start that job first, ``--prioritize``): its rerun resumes it mid-training;
2. while a job of the atlas's refinement trains (the refinement's jobs exist only once the
   Snakemake checkpoint has planned them from the coarse runs: the rerun must plan the same);
3. at a seeded random moment after two more jobs have ended.

A killed Snakemake cannot release its lock on the working directory, so a rerun is refused
until ``snakemake --unlock`` (the remedy its message gives); the test does the same.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from benign.core import paths
from benign.core.schema import MEASURED
from tests.helpers.smoke_run import SMOKE, local_smoke_run
from tests.helpers.workflow_utils import (
    TABLES,
    copy_repo,
    files_under,
    processes_in,
    read_tables,
    snakemake,
    sweep_tables,
    table_args,
)

SEED = 20250713
DROP = (*MEASURED, "device")  # the only columns allowed to differ
ALL = TABLES + sweep_tables("config/smoke.yaml")
CONFIGS = (SMOKE[1], "config/checkpoints.yaml")
DELAYED = paths.fill(paths.SYNTHETIC_JOB, job="token_delayed_00", table="runs")


def checkpoint_written(repo: Path, log: str) -> bool:
    """The delayed job, mid-training, has saved a checkpoint."""
    return any((repo / paths.CHECKPOINTS / "token_delayed_00").glob("running-*"))


def refinement_running(repo: Path, log: str) -> bool:
    """A job of the atlas's refinement (planned by the checkpoint from the coarse runs) has started."""
    return "rule train_refinement:" in log


def jobs_ended(count: int) -> Callable[[Path, str], bool]:
    return lambda repo, log: log.count("Finished jobid") >= count


def killed(repo: Path, when: str, ready: Callable[[Path, str], bool], extra: float, *first: str) -> dict:
    """Run the build (unlocking first if a kill left the lock), kill -9 its process group
    ``extra`` seconds after ``ready(repo, log)`` holds; what was running and left at the kill."""
    args = table_args(*CONFIGS, tables=ALL)
    unlocked = snakemake(repo, "--unlock", *args)
    assert unlocked.returncode == 0, unlocked.stdout[-2000:] + unlocked.stderr[-2000:]
    log = repo / "killed-run.log"
    start = time.perf_counter()
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "snakemake", *args, *first], cwd=repo, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
        while proc.poll() is None and not ready(repo, log.read_text()):
            time.sleep(0.02)
        time.sleep(extra)
        finished_first = proc.poll() is not None
        if not finished_first:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    for _ in range(50):  # until the kernel has taken down the group's processes
        if not processes_in(repo):
            break
        time.sleep(0.1)
    text = log.read_text()
    log.unlink()
    done = set(re.findall(r"Finished jobid: (\d+)", text))
    return {
        "when": when,
        "delay": time.perf_counter() - start,
        "finished_first": finished_first,
        "survivors": processes_in(repo),
        "running_at_kill": sorted(name for jobid, name in started_jobs(text).items() if jobid not in done),
        "partial_at_kill": sorted(f for f in files_under(repo / "results") if ".tmp" in f or ".checkpoints" in f)
        if (repo / "results").exists()
        else [],
    }


def started_jobs(log: str) -> dict[str, str]:
    """Job id -> "rule[wildcards]" of every job a Snakemake log says it started."""
    jobs = {}
    for rule, body in re.findall(r"^(?:local)?rule (\w+):\n((?:    .*\n)+)", log, flags=re.M):
        jobid = re.search(r"jobid: (\d+)", body)
        wildcards = re.search(r"wildcards: (.*)", body)
        if jobid:
            jobs[jobid.group(1)] = rule + (f"[{wildcards.group(1)}]" if wildcards else "")
    return jobs


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    """(the smoke run's repo, the killed build's repo, its kills, its last run)."""
    first, _ = local_smoke_run(tmp_path_factory)
    repo = copy_repo(tmp_path_factory.mktemp("killed") / "repo", source=first)
    (repo / "config/checkpoints.yaml").write_text("synthetic: {checkpoint_every: 50}\n")
    extra = random.Random(SEED).random() * 2.0
    kills = [
        killed(
            repo, "as soon as the delayed job has saved a checkpoint", checkpoint_written, 0.0, "--prioritize", DELAYED
        ),  # fmt: skip
        killed(repo, "while the atlas's refinement trains", refinement_running, 0.0),
        killed(repo, f"{extra:.1f} s after two more jobs ended", jobs_ended(2), extra),
    ]
    for i, k in enumerate(kills):
        print(f"\nkill {i + 1}, {k['when']}, at {k['delay']:.1f} s: running {k['running_at_kill']}; "
              f"checkpoint/temp files left: {k['partial_at_kill']}")  # fmt: skip
    unlocked = snakemake(repo, "--unlock", *table_args(*CONFIGS, tables=ALL))
    assert unlocked.returncode == 0
    last = snakemake(repo, *table_args(*CONFIGS, tables=ALL))
    return first, repo, kills, last


@pytest.mark.slow
def test_every_kill_lands_during_the_build(build):
    _, _, kills, _ = build
    for k in kills:
        assert not k["finished_first"], f"the build had ended before the kill {k['when']}"
        assert not k["survivors"], f"processes outlived kill -9 of the group: {k['survivors']}"
    assert any(job.startswith("train_refinement") for job in kills[1]["running_at_kill"]), kills[1]


@pytest.mark.slow
def test_the_job_killed_mid_training_resumes_from_its_checkpoint(build):
    _, repo, kills, _ = build
    assert "train_synthetic[job=token_delayed_00]" in kills[0]["running_at_kill"], kills[0]
    log = (repo / "logs/synthetic/train_token_delayed_00.log").read_text()
    assert re.search(r"resumed batch .* from its checkpoint at step \d+", log), log[-2000:]


@pytest.mark.slow
def test_the_last_run_completes(build):
    last = build[3]
    assert last.returncode == 0, last.stdout[-3000:] + last.stderr[-3000:]


@pytest.mark.slow
def test_every_table_equals_the_uninterrupted_run(build):
    first, repo, _, _ = build
    expected, got = (read_tables(r, DROP, tables=ALL) for r in (first, repo))
    for name, table in expected.items():
        assert len(table) > 0, name
        pd.testing.assert_frame_equal(got[name], table, check_exact=True, obj=name)


@pytest.mark.slow
def test_the_same_files_in_every_job_folder_and_nothing_stray(build):
    first, repo, _, _ = build
    folder = repo / "results/synthetic"
    assert files_under(folder) == files_under(first / "results/synthetic")
    assert not (repo / "results/real").exists()
    assert not [f for f in files_under(repo / "results") if ".tmp" in f or ".checkpoints" in f]


@pytest.mark.slow
def test_nothing_left_to_do_after_the_last_run(build):
    out = snakemake(build[1], "-n", *table_args(*CONFIGS, tables=ALL))
    assert out.returncode == 0 and "Nothing to be done" in out.stdout + out.stderr, out.stdout[-2000:]
