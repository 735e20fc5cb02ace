"""What a run will cost, before it starts (docs/cluster.md#the-forecast): every job the plan lists,
its core time from the cost models that size its request (benign.plan.resources,
benign.synthetic.costs), without their safety factor, summed per part and per half.

The atlas's refinement and its step check are planned only once the coarse atlas has run (a
checkpoint): until their plan exists they are estimated from the coarse lines, each refined
seed of a line as a batch of :data:`REFINE_RUNS` runs of the line's horizon and
:data:`SHORT_BATCHES` batches of :data:`SHORT_RUNS` runs to :data:`SHORT_STEPS` (the windows
along time), each checked seed as a batch of :data:`CHECK_RUNS` runs of the checked step.
Torch-free: the workflow prints it when a run starts, ``python -m benign forecast`` at any time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from benign.core import job_time
from benign.plan import resources
from benign.plan.load import Plan
from benign.synthetic import flow

# The refinement per refined (line, seed) and the step check per checked (line, seed), as the
# default atlas's plans hold them (fitted to the plans of 8 refined seeds a line; with today's 4,
# two of them the coarse seeds, the estimate is 1.03 times the plan priced run by run, the step
# check's 1.00 on 2 checked seeds a line).
REFINE_RUNS, SHORT_BATCHES, SHORT_RUNS, SHORT_STEPS = 9, 5, 3, 316
CHECK_RUNS = 10
SYNTHETIC, REAL = job_time.SYNTHETIC, job_time.REAL


@dataclass(frozen=True)
class Forecast:
    """Core seconds per part (``parts``: {part: (half, seconds)}); ``estimated``: the parts no
    plan lists yet."""

    parts: dict[str, tuple[str, float]]
    estimated: tuple[str, ...] = ()

    def half(self, half: str, training_only: bool = False) -> float:
        """A half's core seconds (``training_only``: the jobs whose runs record their wall time,
        what the summary measures: synthetic training and real phase 2)."""
        return sum(s for part, (h, s) in self.parts.items() if h == half and (not training_only or _training(part)))

    def training_parts(self) -> dict[str, tuple[str, float]]:
        """{part: (half, core seconds)} of the jobs whose runs record their wall time (the summary's
        job time), as benign.core.job_time.measured names a run's."""
        return {part: value for part, value in self.parts.items() if _training(part)}

    def total(self) -> float:
        return sum(s for _, s in self.parts.values())

    def text(self, cores: int | None = None) -> str:
        """The lines printed before a run starts (``cores``: the wall time on that many, the jobs
        spread evenly; None: core time only)."""
        total = self.total() / 60
        if not self.parts:
            return "Forecast (benign/plan/forecast.py): no training job left to run (tables and figures only)"
        wall = (
            f", about {total / cores:.{0 if total / cores >= 10 else 1}f} min on {cores} core{'s' if cores > 1 else ''}"
            if cores
            else ""
        )
        lines = [f"Forecast (benign/plan/forecast.py): {total:.{0 if total >= 10 else 1}f} core-minutes of training jobs{wall} (each "
                 "job one thread; tables and figures add a few minutes)"]  # fmt: skip
        for half in (SYNTHETIC, REAL):
            if not any(h == half for h, _ in self.parts.values()):
                continue
            lines.append(f"  {half}: {self.half(half) / 60:.1f} core-min")
            for part, (h, seconds) in sorted(self.parts.items(), key=lambda kv: -kv[1][1]):
                if h == half and seconds >= 30:
                    mark = " (estimated: planned when the coarse atlas is done)" if part in self.estimated else ""
                    lines.append(f"    {part}: {seconds / 60:.1f}{mark}")
        return "\n".join(lines)


def _training(part: str) -> bool:
    return part.startswith(("train ", "refine", "step check")) or part == "real phase 2"


def forecast(plan: Plan, fits: dict, refinement: dict[str, list[dict]] | None = None,
             limit: resources.Need | None = None, pending: Callable[[str, str], bool] | None = None) -> Forecast:  # fmt: skip
    """The forecast of a checked ``plan``; ``fits``: the config's ``synthetic.boundary_fits``;
    ``refinement``: the refinement's jobs once planned ({job id: runs}), else estimated;
    ``limit``: the limit job's need; ``pending(kind, key)``: whether a job still has to run
    (kinds ``synthetic``, ``refinement``, ``max_margin``, ``limit``, ``features``, ``pretrain``,
    ``train``; default: every job)."""
    device = plan.cluster.device
    pending = pending or (lambda kind, key: True)
    parts: dict[str, tuple[str, float]] = {}

    def add(part: str, half: str, seconds: float) -> None:
        parts[part] = (half, parts.get(part, (half, 0.0))[1] + seconds)

    for job, runs in plan.synthetic_jobs.items():
        if pending("synthetic", job):
            add(job_time.group(job), SYNTHETIC, resources.synthetic_job_need(runs, device).seconds)
    for model, runs in plan.max_margin_runs.items():
        if pending("max_margin", model):
            add("attention-SVM check", SYNTHETIC, resources.synthetic_job_need(runs, device).seconds)
    if limit is not None and pending("limit", ""):
        add("limit", SYNTHETIC, limit.seconds)
    estimated: tuple[str, ...] = ()
    if refinement is not None:
        for job, runs in refinement.items():
            if pending("refinement", job):
                part = "step check" if "convergence" in job else "refinement"
                add(part, SYNTHETIC, resources.synthetic_job_need(runs, device).seconds)
    elif fits.get("refine") and pending("refinement", ""):  # not planned yet: the whole refinement to come
        refine, check = _refinement_estimate(plan, fits)
        add("refinement", SYNTHETIC, refine)
        estimated = ("refinement",)
        if check:
            add("step check", SYNTHETIC, check)
            estimated += ("step check",)
    names = {"features": "backbone features", "pretrain": "real phase 1", "train": "real phase 2"}
    for rule, needs in plan.real_needs.items():
        for value, need in needs.items():
            if not pending(rule, value):
                continue
            copies = plan.feature_parts.get(value, 1) if rule == "features" else 1
            add(names[rule], REAL, copies * need.seconds)
    return Forecast(parts, estimated)


def _refinement_estimate(plan: Plan, fits: dict) -> tuple[float, float]:
    """(refinement, step check) core seconds, from the coarse lines of the refined sweep."""
    refine, check = fits["refine"], fits.get("convergence")
    setting = refine.get("sweep")
    lines: dict[tuple, dict] = {}
    for runs in plan.synthetic_jobs.values():
        for run in runs:
            if run["model"] == fits.get("model") and setting in run["sweeps"]:
                lines.setdefault((run["d"], run["n"], run["T"]), run)
    device = plan.cluster.device
    refined = sum(
        resources.batch_need([dict(line, seed=seed)] * REFINE_RUNS, device)[1]
        + SHORT_BATCHES * resources.batch_need([_shorter(line, seed)] * SHORT_RUNS, device)[1]
        for line in lines.values()
        for seed in refine["seeds"]
    )
    if not check:
        return refined, 0.0
    factor = int(check["factor"])
    checked = sum(
        resources.batch_need([_finer(line, factor, seed)] * CHECK_RUNS, device)[1]
        for line in lines.values()
        for seed in check["seeds"]
    )
    return refined, checked


def _shorter(run: dict, seed: int) -> dict:
    """A run of a window along time: the line's, to :data:`SHORT_STEPS` steps."""
    steps = min(SHORT_STEPS, int(run["steps"]))
    points = run.get("log_points") or 0
    return dict(run, seed=seed, steps=steps, log_points=min(points, steps + 1) if points else 0)


def _finer(run: dict, factor: int, seed: int) -> dict:
    """A checked run: the step divided by ``factor`` for ``factor`` times the steps (a flow's
    tolerance divided too), as benign.analysis.refinement.convergence_runs plans it."""
    out = dict(run, seed=seed, steps=int(run["steps"]) * factor, lr=float(run["lr"]) / factor)
    if out.get("integrator") == "flow":
        out["flow_tol"] = float(run.get("flow_tol") or flow.TOL) / factor
    return out
