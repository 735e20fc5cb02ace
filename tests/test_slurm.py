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

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from benign.core.schema import MEASURED
from tests.helpers.smoke_run import SMOKE, local_smoke_run
from tests.helpers.workflow_utils import ROOT, copy_repo

pytestmark = pytest.mark.slurm

# Test-only settings on top of profiles/slurm: poll job states with squeue (the CI cluster
# has no accounting database, so sacct, the plugin's default, would fail and Snakemake would
# wait forever), poll first after 1 s instead of 40 s, keep every job's SLURM log. After a
# poll that finds no job finished, the plugin waits 10 s longer before the next one (up to
# 180 s), so each step of the workflow costs tens of seconds of waiting here.
FAST_STATUS = (
    "--slurm-status-command",
    "squeue",
    "--slurm-init-seconds-before-status-checks",
    "1",
    "--slurm-keep-successful-logs",
)
# One job of each training rule of the smoke config, and what they need (a data set, its
# features, its phase-1 head). Targets go first: --configfile takes every path that follows it.
SAMPLE = (
    "results/synthetic/jobs/token_settings/runs.parquet",
    "results/synthetic/jobs/encoder_heatmap_00/runs.parquet",
    "results/real/jobs/rotten_s1_n8/runs.parquet",
)
# A toy's failure must end its run at once: the profile's retries are for training jobs.
NO_RETRY = ("--retries", "0")
# A training job with more work than its time limit: the smoke config's delayed-generalization
# job (two seeds, one batch each) at 350000 steps, about 70 s of one core on an idle machine
# and twice that beside the other runs of this module, asks for `runtime=4*attempt-3` minutes
# (1, then 5, then 9: the shortest SLURM limit first, growing on each retry as the profile's
# estimates do). SLURM sends SIGTERM at the limit; the job checkpoints and exits 75, and the retry
# resumes it. The uninterrupted reference runs locally, without checkpoints.
# checkpoints. Targets go first: --configfile, --config and --set-resources take every value
# that follows them.
LONG_JOB = "results/synthetic/jobs/token_delayed/runs.parquet"
LONG = "synthetic: {{checkpoint_every: {}, token: {{delayed: {{steps: 350000}}}}}}\n"
LONG_ARGS = ("--configfile", "config/smoke.yaml", "config/long.yaml", "--retries", "2")
# 1, 5, 9 minutes: the first attempt must run out of time, a retry must have room to finish
# from its checkpoint on a loaded 2-core machine (the smoke run trains beside it); with 3
# minutes a resumed retry once reached its limit while storing its output.
TIME_LIMIT = ("--set-resources", "train_synthetic:runtime=4*attempt-3")
LONG_KILL_AFTER = 900
SMOKE_KILL_AFTER = 1500  # seconds before `timeout -s KILL` ends a hung smoke run (over 600 on an AVX2-only 2-core CPU)
TOY_KILL_AFTER = 300
SUBMITTED = re.compile(r"has been submitted with SLURM jobid (\d+)")

FAILING = """
rule fail:
    output:
        "never.txt",
    log:
        "logs/fail.log",
    shell:
        "echo this job fails > {log}; exit 3"
"""
# SLURM time limits are whole minutes: runtime=1 is the shortest possible.
OVER_TIME = """
rule overrun:
    output:
        "never.txt",
    log:
        "logs/overrun.log",
    resources:
        runtime=1,
    shell:
        "echo sleeping past the time limit > {log}; sleep 600; touch {output}"
"""


def slurm_unavailable() -> str | None:
    """Why the tests cannot submit jobs here, or None when a cluster answers."""
    if shutil.which("sbatch") is None:
        return "sbatch not found: install SLURM with `bash ci/setup-system.sh`, start it with `bash ci/slurm-up.sh`"
    try:
        out = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        return "sinfo did not answer within 20 s: start SLURM with `bash ci/slurm-up.sh`"
    states = out.stdout.split()
    if out.returncode != 0 or not set(states) & {"idle", "mixed", "allocated", "completing"}:
        detail = (out.stderr.strip().splitlines() or states or ["no nodes"])[-1]
        return f"no SLURM node is up ({detail}): start SLURM with `bash ci/slurm-up.sh`"
    return None


@dataclass
class Finished:
    returncode: int
    seconds: float
    output: str

    def job_ids(self) -> list[str]:
        return SUBMITTED.findall(self.output)

    def tail(self) -> str:
        return self.output[-4000:]


class Run:
    """`snakemake --profile profiles/slurm` started in the background under `timeout -s KILL`."""

    def __init__(self, cwd: Path, *args: str, kill_after: int):
        self.cwd = cwd
        self.kill_after = kill_after
        self.log = cwd / "snakemake.out"
        self.started = time.monotonic()
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                [
                    "timeout",
                    "-s",
                    "KILL",
                    str(kill_after),
                    sys.executable,
                    "-m",
                    "snakemake",
                    "--profile",
                    "profiles/slurm",
                    *FAST_STATUS,
                    *args,
                ],
                cwd=cwd,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.ended: float | None = None
        self._waiter = threading.Thread(target=self._wait, daemon=True)
        self._waiter.start()

    def _wait(self) -> None:
        self.proc.wait()
        self.ended = time.monotonic()

    def finish(self) -> Finished:
        """Wait for the run to end; how long it took counts from its start to its end."""
        self._waiter.join(timeout=self.kill_after + 60)
        assert self.ended is not None, f"{self.cwd}: still running after {self.kill_after + 60} s"
        return Finished(self.proc.returncode, self.ended - self.started, self.log.read_text())

    def stop(self) -> None:
        if self.ended is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass  # it ended meanwhile
            self._waiter.join(timeout=30)


def slurm_jobs(ids: list[str]) -> dict[str, tuple[str, str]]:
    """Job id -> (state, working directory), as SLURM itself reports them."""
    out = subprocess.run(
        ["squeue", "-h", "-t", "all", "-j", ",".join(ids), "-o", "%i|%T|%Z"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    jobs = {}
    for line in out.stdout.split():
        job_id, state, workdir = line.split("|", 2)
        jobs[job_id] = (state, workdir)
    return jobs


def cancel_jobs_under(path: Path) -> None:
    """scancel every queued or running job whose working directory is under `path`."""
    out = subprocess.run(["squeue", "-h", "-o", "%i|%Z"], capture_output=True, text=True, timeout=30)
    ids = [line.split("|")[0] for line in out.stdout.split() if line.split("|", 1)[1].startswith(str(path))]
    if ids:
        subprocess.run(["scancel", *ids], timeout=30)


def toy_workflow(path: Path, snakefile: str) -> Path:
    """A one-rule workflow in `path` that uses the project's profiles."""
    path.mkdir(parents=True)
    (path / "Snakefile").write_text(snakefile)
    shutil.copytree(ROOT / "profiles", path / "profiles")
    return path


def report(capsys, line: str) -> None:
    with capsys.disabled():
        print(f"\n[slurm] {line}")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Start the three SLURM runs side by side (the toys mostly wait), and the local run."""
    reason = slurm_unavailable()
    if reason:
        pytest.skip(reason)
    base = tmp_path_factory.mktemp("slurm")
    long_repos = [copy_repo(base / name) for name in ("time_limit", "uninterrupted")]
    for repo, every in zip(long_repos, (50000, 0)):
        (repo / "config/long.yaml").write_text(LONG.format(every))
    reference = subprocess.Popen(
        [sys.executable, "-m", "snakemake", LONG_JOB, "--cores", "1", *LONG_ARGS],
        cwd=long_repos[1], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    started = {
        "time_limit": Run(long_repos[0], LONG_JOB, *LONG_ARGS, *TIME_LIMIT, kill_after=LONG_KILL_AFTER),
        "failing": Run(toy_workflow(base / "failing", FAILING), *NO_RETRY, kill_after=TOY_KILL_AFTER),
        "over_time": Run(toy_workflow(base / "over_time", OVER_TIME), *NO_RETRY, kill_after=TOY_KILL_AFTER),
        "smoke": Run(copy_repo(base / "smoke"), *SAMPLE, *SMOKE, kill_after=SMOKE_KILL_AFTER),
    }
    try:
        started["local"] = local_smoke_run(tmp_path_factory)
        started["uninterrupted"] = (long_repos[1], reference)
        yield started
    finally:
        for run in started.values():
            if isinstance(run, Run):
                run.stop()
        if reference.poll() is None:
            reference.kill()
        cancel_jobs_under(base)


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
    """The long job's first attempt ends in TIMEOUT (SIGTERM at its 1 min limit), a retry with a
    longer limit resumes it from its checkpoint and completes it, and its tables equal the
    uninterrupted run's."""
    run = runs["time_limit"].finish()
    assert run.returncode == 0, run.tail()
    ids = run.job_ids()
    states = slurm_jobs(ids)
    assert len(ids) >= 2 and states[ids[0]][0] == "TIMEOUT" and states[ids[-1]][0] == "COMPLETED", (states, run.tail())
    assert "runtime=1" in run.output and "runtime=5" in run.output
    repo = runs["time_limit"].cwd
    first = next((repo / ".snakemake/slurm_logs").rglob(f"{ids[0]}.log")).read_text()
    assert "DUE TO TIME LIMIT" in first, first[-3000:]
    # The job's shell may die of the same SIGTERM before the script's exit status 75 reaches
    # Snakemake, so the evidence that the script caught it is its checkpoint: Snakemake clears
    # a job's log before a retry, and the last attempt's log says where it resumed.
    job_log = (repo / "logs/synthetic/train_token_delayed.log").read_text()
    resumed = [int(s) for s in re.findall(r"from its checkpoint at step (\d+)", job_log)]
    assert any(step % 50000 for step in resumed), job_log[-3000:]  # a step the signal chose, not a periodic one
    reference_repo, reference = runs["uninterrupted"]
    assert reference.wait(timeout=LONG_KILL_AFTER) == 0
    folder = Path(LONG_JOB).parent
    for name in ("runs", "curves", "attention"):
        expected = pd.read_parquet(reference_repo / folder / f"{name}.parquet")
        got = pd.read_parquet(runs["time_limit"].cwd / folder / f"{name}.parquet")
        drop = [c for c in expected.columns if c in MEASURED or c == "device"]
        pd.testing.assert_frame_equal(got.drop(columns=drop), expected.drop(columns=drop), obj=name)
    report(capsys, f"job past its time limit: {len(ids)} attempts, resumed at steps {resumed}, {run.seconds:.0f} s")
