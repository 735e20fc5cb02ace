"""The runs the SLURM tests inspect (tests/workflow/test_slurm.py), and how to start, poll and stop them.

They are started together when a test session that holds SLURM tests begins (tests/conftest.py):
they mostly wait on the scheduler, so the rest of the suite runs meanwhile.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml
from snakemake.utils import update_config

from benign.core import paths
from benign.plan import jobs as plan
from benign.plan.load import read
from benign.synthetic.trainer import RunSpec, train_runs
from tests.helpers.smoke_run import SMOKE
from tests.helpers.workflow_utils import ROOT, copy_repo

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
    paths.fill(paths.SYNTHETIC_JOB, job="token_settings_00", table="runs"),
    paths.fill(paths.SYNTHETIC_JOB, job="encoder_heatmap_00", table="runs"),
    paths.fill(paths.REAL_JOB, cell="rotten_s1_n8", table="runs"),
)
# A toy's failure must end its run at once: the profile's retries are for training jobs.
NO_RETRY = ("--retries", "0")
# A training job with more work than its time limit: the smoke config's delayed-generalization
# job (two seeds, one batch each) with as many steps as take LONG_SECONDS on one core here,
# measured on a short run of the same job before anything else starts (long_job_steps), so
# that the first attempt runs out of time on any CPU. It asks for 1 minute (the shortest SLURM
# limit; slurmctld enforces it up to a poll later, about 80 s in all), then ample room for the
# retries: beside the test suite on a 2-core AVX2-only EPYC a job runs several times slower than
# alone. SLURM sends SIGTERM at the limit; the job checkpoints and exits 75, and the retry
# resumes it. That a resumed job's tables equal an uninterrupted run's is shown without SLURM
# (tests/synthetic/test_checkpoint.py, a SIGTERM at a step of its own choosing; and
# tests/workflow/test_crash_resume.py, the whole smoke build), so no second 2-minute run is trained
# here to compare with. Targets go first: --configfile, --config and --set-resources take every
# value that follows them.
LONG_JOB = paths.fill(paths.SYNTHETIC_JOB, job="token_delayed_00", table="runs")
LONG = "synthetic: {{checkpoint_every: {every}, token: {{delayed: {{steps: {steps}}}}}}}\n"
LONG_ARGS = ("--configfile", "config/smoke.yaml", "config/long.yaml", "--retries", "2")
LONG_SECONDS = 120
TIME_LIMIT = ("--set-resources", "train_synthetic:runtime=1 if attempt == 1 else 25")
LONG_KILL_AFTER = 1800
SMOKE_KILL_AFTER = 1500  # seconds before `timeout -s KILL` ends a hung sample run (it trains beside the test suite)
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


CHECKPOINT_EVERY = 50000  # a resume at another step is one the signal chose


def long_job_steps(seconds: float = LONG_SECONDS, probe: int = 20000) -> int:
    """Steps of the smoke config's delayed job that take ``seconds`` on one core of this machine,
    from the time ``probe`` steps of it take now (the machine is at its least loaded before the
    runs start, so the job takes at least this long in the test)."""
    cfg = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    update_config(cfg, yaml.safe_load((ROOT / "config/smoke.yaml").read_text()))
    runs = [
        RunSpec(**{**run, "steps": probe})
        for run in plan.synthetic_jobs(read(cfg, ROOT / "workflow/schemas/config.schema.yaml"))["token_delayed_00"]
    ]
    start = time.perf_counter()
    train_runs(runs, device="cpu")
    rate = probe / (time.perf_counter() - start)
    return max(2 * CHECKPOINT_EVERY, int(rate * seconds) // 1000 * 1000)


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


@contextlib.contextmanager
def started_runs(base: Path) -> Iterator[dict]:
    """Start side by side, in folders under `base`: the time-limit run, the two toys, and the
    smoke sample. On the way out, stop whatever still runs and cancel its SLURM jobs."""
    long_repo = copy_repo(base / "time_limit")
    (long_repo / "config/long.yaml").write_text(LONG.format(every=CHECKPOINT_EVERY, steps=long_job_steps()))
    runs = {
        "time_limit": Run(long_repo, LONG_JOB, *LONG_ARGS, *TIME_LIMIT, kill_after=LONG_KILL_AFTER),
        "failing": Run(toy_workflow(base / "failing", FAILING), *NO_RETRY, kill_after=TOY_KILL_AFTER),
        "over_time": Run(toy_workflow(base / "over_time", OVER_TIME), *NO_RETRY, kill_after=TOY_KILL_AFTER),
        "smoke": Run(copy_repo(base / "smoke"), *SAMPLE, *SMOKE, kill_after=SMOKE_KILL_AFTER),
    }
    try:
        yield runs
    finally:
        for run in runs.values():
            run.stop()
        cancel_jobs_under(base)
