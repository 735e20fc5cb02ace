"""What a job needs, from the runs it holds: memory (MB) and time (minutes), per device kind
(docs/cluster.md#what-a-job-asks-for).

Torch-free: the workflow computes it for every job at parse time. Memory is counted from the
tensors a job holds at its peak (parameters, optimiser state, pending updates, data and test
set), times the runs of a batch, plus what a Python process with torch loaded holds before it
computes anything; a job trains its batches one after another, so it needs its largest
batch's memory and the sum of their times. Time follows a cost model per model, fitted to
measured wall times (``CPU_SECONDS``; ``DEVICE_SPEED`` scales it for a GPU), with a safety
factor. Snakemake's ``attempt`` scales both on a retry (:func:`for_attempt`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from benign.synthetic import registry, spec

DEVICE_KINDS = ("cpu", "cuda")
# A job's process before it computes (Python, torch, numpy, pandas, pyarrow loaded); the
# default reproduction's smallest job peaked at 426 MB.
BASE_MB = 600
TEMPORARIES = 1.25  # tensors that live for part of a step, on top of the counted ones
SAFETY = 2.0  # the time asked for, over the cost model's estimate
START_S = 60.0  # a job's start: interpreter, imports, reading its inputs

# Seconds of one CPU core, fitted to the default reproduction's measured wall times (per batch;
# the synthetic models' own, and their device speeds, are in benign/synthetic/costs.py):
# real phase 2: per optimiser step, a * (batch rows * runs) * (4 T d + 3 d^2 + 4 d m) + c;
# real phase 1: per step, a * runs * (rows * (d^2 + d K)) + c; features: a * rows * layers * T * (12 d^2 + 2 T d).
CPU_SECONDS = {
    "real_phase2": dict(a=5.4e-11, c=1.0e-3),
    "real_phase1": dict(a=3.0e-10, c=3.5e-4),
    "features": dict(a=2.0e-11),
}
# How much faster a device kind runs each cost model than one CPU core (benchmarks/README.md,
# the H200 rows against the CPU rows; conservative).
DEVICE_SPEED = {
    "cpu": {"real_phase2": 1.0, "real_phase1": 1.0, "features": 1.0},
    "cuda": {"real_phase2": 1.5, "real_phase1": 1.0, "features": 10.0},
}


@dataclass(frozen=True)
class Need:
    """What a job asks the scheduler for: peak memory (MB) and wall time (minutes); and the
    cost model's own estimate of its time (seconds of one core, no safety factor), which the
    forecast sums (benign.plan.forecast)."""

    mem_mb: int
    runtime_min: int
    seconds: float = field(default=0.0, compare=False)

    @staticmethod
    def of(mem_bytes: float, seconds: float) -> Need:
        return Need(
            math.ceil(BASE_MB + TEMPORARIES * mem_bytes / 2**20), math.ceil((START_S + SAFETY * seconds) / 60), seconds
        )


def for_attempt(need: Need, attempt: int, cluster: Cluster | None = None) -> Need:
    """A retry asks for more: memory x1.5 and time x2 per earlier attempt, up to the site's
    ceilings (a request above a partition's limit is refused by the scheduler). A job killed at
    a ceiling still moves on: it resumes from its checkpoint."""
    mem, time = math.ceil(need.mem_mb * 1.5 ** (attempt - 1)), math.ceil(need.runtime_min * 2 ** (attempt - 1))
    if cluster is not None:
        mem = min(mem, cluster.max_mem_mb or mem)
        time = min(time, cluster.max_runtime_min or time)
    return Need(max(mem, need.mem_mb), max(time, need.runtime_min), need.seconds)


def _kind(device: str) -> str:
    if device not in DEVICE_KINDS:
        raise ValueError(f"device kind must be one of {DEVICE_KINDS}, not {device!r}")
    return device


# ---------------------------------------------------------------- synthetic batches


def batch_need(runs: Sequence[dict], device: str = "cpu") -> tuple[float, float]:
    """(bytes, seconds) of the runs of one batch (they share a batch key), from their model's cost
    function (benign.synthetic.registry.Model.cost, benign/synthetic/costs.py)."""
    return registry.model(runs[0]["model"]).cost(len(runs), runs[0], _kind(device))


def batches(runs: Sequence[dict]) -> list[list[dict]]:
    out: dict[tuple, list[dict]] = {}
    for run in runs:
        out.setdefault(spec.batch_key(run), []).append(run)
    return list(out.values())


def synthetic_job_need(runs: Sequence[dict], device: str = "cpu") -> Need:
    """A training job trains its batches one after another: the largest batch's memory, the sum of the times."""
    needs = [batch_need(b, device) for b in batches(runs)]
    return Need.of(max(m for m, _ in needs), sum(s for _, s in needs))


# Seconds of one core per line of the atlas's limit job, base + a (nT / at)^2 (cubed past at: the
# attention-SVM programs' growth), fitted to its measured time per line (Gram engine, n_test 1000).
LIMIT_SECONDS = dict(base=0.5, a=5.6, at=640)


def limit_need(lines: Sequence[dict]) -> Need:
    """The atlas's limit job (benign.synthetic.svm_limit): per line (n, T, n_test of each), a
    handful of batches of the W-frozen twin built and trained to the horizon, and some twenty
    attention-SVM programs of n (T - 1) constraints (:data:`LIMIT_SECONDS`). Memory: the largest
    line's test products."""
    if not lines:
        return Need.of(0.0, 0.0)
    k = LIMIT_SECONDS
    seconds = sum(k["base"] + k["a"] * max((r["n"] * r["T"] / k["at"]) ** 2, (r["n"] * r["T"] / k["at"]) ** 3)
                  for r in lines)  # fmt: skip
    big = max(lines, key=lambda r: r["n"] * r["T"])
    N, rows = big["n"] * big["T"], big["n_test"] * big["T"]
    return Need.of(8.0 * (4 * rows * 2 * (N + 2) + 24 * N * N), seconds)


# ---------------------------------------------------------------- real data


def _key(default, description: str, **schema):
    """A field of :class:`Cluster` and its key in the config schema: ``schema`` and ``description``."""
    return field(default=default, metadata={"schema": schema, "description": description})


@dataclass(frozen=True)
class Cluster:
    """``cluster`` in the config (a profile sets it): the device kind the jobs compute on, and the
    most memory (MB) and time (minutes) one job may ask for (None: no ceiling). Each field is a
    key of the config schema's ``cluster`` block, with the schema and words here
    (benign/plan/schema.py writes them; a profile's numbers arrive as strings)."""

    device: str = _key(
        "cpu", "what the training jobs compute on (sets their gpu resource); its kinds are benign/plan/resources.py's"
    )
    max_mem_mb: int | None = _key(
        None, "most memory one job may ask for (MB); null none", type=["integer", "string", "null"]
    )
    max_runtime_min: int | None = _key(
        None, "most time one job may ask for (minutes); null none", type=["integer", "string", "null"]
    )
    group: str | None = _key(
        None,
        "the group of the short jobs (aggregation, tables, figures, the summary), submitted "
        "together; null: none (a local run)",
        type=["string", "null"],
    )  # workflow/rules/common.smk

    def fits(self, need: Need) -> bool:
        return (self.max_mem_mb is None or need.mem_mb <= self.max_mem_mb) and (
            self.max_runtime_min is None or need.runtime_min <= self.max_runtime_min
        )

    def describe(self) -> str:
        mem = f"{self.max_mem_mb} MB" if self.max_mem_mb is not None else "no memory ceiling"
        time = f"{self.max_runtime_min} min" if self.max_runtime_min is not None else "no time ceiling"
        return f"the ceiling cluster.max_mem_mb / max_runtime_min = {mem} / {time}"


def pack(runs: list[dict], prefix: str, batches_per_job: int | None, cluster: Cluster) -> dict[str, list[dict]]:
    """The one packing of runs into jobs, for the planned sweeps and the atlas's refinement
    alike: runs that share the spec's batch key (one data draw) train as one program, a job
    trains ``batches_per_job`` batches (None: all), in batch-key order, and a job over the
    cluster's ceilings is split (:func:`fit`). Ids: ``{prefix}_{k:02d}``."""
    batches: dict[tuple, list[dict]] = {}
    for run in runs:
        batches.setdefault(spec.batch_key(run), []).append(run)
    keys = sorted(batches, key=lambda key: tuple((v is None, v) for v in key))
    per_job = batches_per_job or max(len(keys), 1)
    planned = [[run for key in keys[k : k + per_job] for run in batches[key]] for k in range(0, len(keys), per_job)]
    parts = [part for k, job in enumerate(planned) for part in fit(job, cluster, f"{prefix}_{k:02d}")]
    return {f"{prefix}_{k:02d}": part for k, part in enumerate(parts)}


def fit(runs: list[dict], cluster: Cluster, job: str) -> list[list[dict]]:
    """The runs of one planned job as jobs within the ceilings: itself if it fits, else its
    batches packed greedily, a batch over them halved (a batch's runs are independent: each
    trains the same alone). A single run over the ceilings is refused, naming ``job``."""
    from benign.plan import ConfigError

    if (cluster.max_mem_mb is None and cluster.max_runtime_min is None) or cluster.fits(
        synthetic_job_need(runs, cluster.device)
    ):
        return [runs]
    parts: list[list[dict]] = []
    for batch in batches(runs):
        for piece in _halve_to_fit(batch, cluster, job, ConfigError):
            if parts and cluster.fits(synthetic_job_need(parts[-1] + piece, cluster.device)):
                parts[-1] = parts[-1] + piece
            else:
                parts.append(piece)
    return parts


def _halve_to_fit(batch: list[dict], cluster: Cluster, job: str, error) -> list[list[dict]]:
    need = synthetic_job_need(batch, cluster.device)
    if cluster.fits(need):
        return [batch]
    if len(batch) == 1:
        run = batch[0]
        raise error(
            f"synthetic job {job}: one run (model {run['model']}, n {run['n']}, T {run['T']}, d {run['d']}, "
            f"steps {run['steps']}, signal_norm {run.get('signal_norm')}) needs {need.mem_mb} MB and "
            f"{need.runtime_min} min on {cluster.device}, above {cluster.describe()}: raise the ceiling or shrink the run"
        )
    half = len(batch) // 2
    return _halve_to_fit(batch[:half], cluster, job, error) + _halve_to_fit(batch[half:], cluster, job, error)
