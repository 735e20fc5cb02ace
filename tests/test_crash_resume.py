"""A workflow killed at any moment (kill -9 of Snakemake and of every job it started) finishes
on a rerun, with the same tables as an uninterrupted run and no stray files in results/.

Each trial builds the metrics tables in a fresh copy, kills the whole process group at a
seeded random moment (mid-run, counted in finished jobs; one trial kills
while a job of the atlas's refinement trains, a last one as soon as a training job has saved a
checkpoint), then runs it again to the end. A killed Snakemake cannot release its lock on the working directory, so the rerun is
refused until ``snakemake --unlock`` (the remedy its message gives); the trials do the same.

The config is the smoke config with a longer delayed-generalization job (so that kills also
land mid-training) and one token heatmap job (fewer job start-ups, a shorter test). The trials
build the token model's tables: every synthetic job kind (named settings, the delayed job,
sweeps, the atlas and its refinement) is among them; the other models' jobs are the same rule
with another model. The trials
checkpoint every 50 steps and the uninterrupted run never does, so equal tables also show
that resuming from a checkpoint does not change the numbers.
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

from benign.core.schema import MEASURED
from tests.helpers.workflow_utils import (
    build_tables,
    copy_repo,
    files_under,
    processes_in,
    read_tables,
    snakemake,
    table_args,
)

TRIALS = 1
SEED = 20250713
DROP = (*MEASURED, "device")  # the only columns allowed to differ
CRASH = "synthetic: {token: {delayed: {steps: 1000}, sweeps: {heatmap: {batches_per_job: 6}}}}\n"
CONFIGS = ("config/smoke.yaml", "config/crash.yaml", "config/checkpoints.yaml")
TOKEN = [f"synthetic/token/{name}.parquet" for name in ("runs", "curves", "attention")]


def kill_points(jobs: int, duration: float) -> list[tuple[int, float]]:
    """Per trial, when to kill: after how many finished jobs, then how many seconds more (a
    seeded random part of the mean time between job ends). Counting jobs rather than seconds
    spreads the kills over the run however loaded the machine is."""
    rng = random.Random(SEED)
    return [((2 * i + 1) * jobs // (2 * TRIALS), rng.random() * duration / jobs) for i in range(TRIALS)]


def jobs_ended(count: int) -> Callable[[Path, str], bool]:
    return lambda repo, log: log.count("Finished jobid") >= count


def refinement_running(repo: Path, log: str) -> bool:
    """A job of the atlas's refinement (planned by the checkpoint from the coarse runs) has started."""
    return "rule train_refinement:" in log


def checkpoint_written(repo: Path, log: str) -> bool:
    """The delayed job, mid-training, has saved a checkpoint."""
    return any((repo / "results/.checkpoints/token_delayed").glob("running-*"))


def setup(repo, checkpoint_every: int):
    (repo / "config/crash.yaml").write_text(CRASH)
    (repo / "config/checkpoints.yaml").write_text(f"synthetic: {{checkpoint_every: {checkpoint_every}}}\n")
    return repo


def killed_then_rerun(repo: Path, when: str, ready: Callable[[Path, str], bool], extra: float) -> dict:
    """Start the workflow, kill -9 its process group ``extra`` seconds after ``ready(repo, log)``
    holds, then rerun it to the end."""
    args = table_args(*CONFIGS, tables=TOKEN)
    log = repo / "killed-run.log"
    start = time.perf_counter()
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "snakemake", *args],
            cwd=repo,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        while proc.poll() is None and not ready(repo, log.read_text()):
            time.sleep(0.02)
        time.sleep(extra)
        finished_first = proc.poll() is not None
        delay = time.perf_counter() - start
        if not finished_first:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    for _ in range(50):  # until the kernel has taken down the group's processes
        if not processes_in(repo):
            break
        time.sleep(0.1)
    killed_log = log.read_text()
    log.unlink()
    finished = set(re.findall(r"Finished jobid: (\d+)", killed_log))
    trial = {
        "when": when,
        "delay": delay,
        "finished_first": finished_first,
        "survivors": processes_in(repo),
        "jobs_done_at_kill": len(finished),
        "running_at_kill": sorted(name for jobid, name in started_jobs(killed_log).items() if jobid not in finished),
        "partial_at_kill": sorted(f for f in files_under(repo / "results") if ".tmp" in f or ".checkpoints" in f)
        if (repo / "results").exists()
        else [],
    }
    rerun = snakemake(repo, *args)
    trial["needed_unlock"] = rerun.returncode != 0 and "Directory cannot be locked" in rerun.stdout + rerun.stderr
    if trial["needed_unlock"]:
        unlocked = snakemake(repo, "--unlock", *args)
        assert unlocked.returncode == 0, unlocked.stdout[-2000:] + unlocked.stderr[-2000:]
        rerun = snakemake(repo, *args)
    logs = "\n".join(p.read_text() for p in sorted((repo / "logs").rglob("*.log")))
    trial |= {
        "rerun": rerun,
        "rerun_jobs": len(re.findall(r"Finished jobid", rerun.stdout + rerun.stderr)),
        "resumed": sorted(
            set(re.findall(r"resumed batch .* at step \d+|already done \(kept from an interrupted job\)", logs))
        ),
    }
    return trial


def started_jobs(log: str) -> dict[str, str]:
    """Job id -> "rule[wildcards]" of every job a Snakemake log says it started."""
    jobs = {}
    for rule, body in re.findall(r"^(?:local)?rule (\w+):\n((?:    .*\n)+)", log, flags=re.M):
        jobid = re.search(r"jobid: (\d+)", body)
        wildcards = re.search(r"wildcards: (.*)", body)
        if jobid:
            jobs[jobid.group(1)] = rule + (f"[{wildcards.group(1)}]" if wildcards else "")
    return jobs


def describe(i: int, duration: float, t: dict) -> str:
    state = (
        "it had already finished"
        if t["finished_first"]
        else f"{t['jobs_done_at_kill']} jobs done, running: {', '.join(t['running_at_kill']) or 'none'}"
    )
    return (
        f"trial {i}: kill {t['when']}, at {t['delay']:.1f} s (a clean run: {duration:.1f} s; {state}); checkpoint/temp files left: {t['partial_at_kill']};"
        f" {'unlock, ' if t['needed_unlock'] else ''}rerun exit {t['rerun'].returncode} after {t['rerun_jobs']} jobs; resumed: {t['resumed']}"
    )


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The uninterrupted run: (repo, seconds)."""
    repo = setup(copy_repo(tmp_path_factory.mktemp("uninterrupted") / "repo"), checkpoint_every=0)
    return repo, build_tables(repo, *CONFIGS, tables=TOKEN)


@pytest.fixture(scope="module")
def trials(reference, tmp_path_factory):
    repo0, duration = reference
    jobs = sum(p.read_text().count("Finished jobid") for p in (repo0 / ".snakemake/log").glob("*.log"))
    moments = [
        (f"{extra:.1f} s after {count} jobs ended", jobs_ended(count), extra)
        for count, extra in kill_points(jobs, duration)
    ]
    moments.append(("while the atlas's refinement trains", refinement_running, 0.0))
    moments.append(("as soon as the delayed job has saved a checkpoint", checkpoint_written, 0.0))
    out = []
    for i, moment in enumerate(moments):
        repo = setup(copy_repo(tmp_path_factory.mktemp(f"killed{i}") / "repo", source=repo0), checkpoint_every=50)
        trial = killed_then_rerun(repo, *moment)
        print("\n" + describe(i, duration, trial))
        out.append(trial | {"repo": repo})
    return out


@pytest.mark.slow
def test_kills_land_during_the_run(trials):
    assert sum(not t["finished_first"] for t in trials) >= len(trials) - 1, [t["when"] for t in trials]
    for t in trials:
        assert not t["survivors"], f"processes outlived kill -9 of the group: {t['survivors']}"


@pytest.mark.slow
def test_a_kill_lands_during_the_refinement(trials):
    """The refinement's jobs exist only once the checkpoint has planned them: a kill there, then a
    rerun, must plan the same jobs and give the same tables (test_tables_equal_an_uninterrupted_run)."""
    during = trials[-2]
    assert not during["finished_first"], during["when"]
    assert any(job.startswith("train_refinement") for job in during["running_at_kill"]), during["running_at_kill"]


@pytest.mark.slow
def test_a_job_killed_mid_training_resumes_from_its_checkpoint(trials):
    last = trials[-1]
    assert not last["finished_first"] and any("from its checkpoint at step" in r for r in last["resumed"]), last[
        "resumed"
    ]


@pytest.mark.slow
def test_rerun_completes(trials):
    for t in trials:
        out = t["rerun"]
        assert out.returncode == 0, f"kill at {t['delay']:.1f} s:\n" + out.stdout[-3000:] + out.stderr[-3000:]


@pytest.mark.slow
def test_tables_equal_an_uninterrupted_run(trials, reference):
    expected = read_tables(reference[0], DROP, tables=TOKEN)
    for t in trials:
        got = read_tables(t["repo"], DROP, tables=TOKEN)
        for name, table in expected.items():
            pd.testing.assert_frame_equal(
                got[name], table, check_exact=True, obj=f"{name} (kill at {t['delay']:.1f} s)"
            )


@pytest.mark.slow
def test_no_stray_files_in_results(trials, reference):
    expected = files_under(reference[0] / "results")
    assert not [f for f in expected if ".tmp" in f or ".checkpoints" in f], expected
    for t in trials:
        assert files_under(t["repo"] / "results") == expected, f"kill at {t['delay']:.1f} s"


@pytest.mark.slow
def test_nothing_left_to_do_after_the_rerun(trials):
    for t in trials:
        out = snakemake(t["repo"], "-n", *table_args(*CONFIGS, tables=TOKEN))
        assert out.returncode == 0 and "Nothing to be done" in out.stdout + out.stderr, (
            out.stdout[-2000:] + out.stderr[-2000:]
        )
