"""The atlas refinement's planning job (the checkpoint plan_refinement): what the plan works out
from the config, as one typed value that the script takes back from its params.

Apart from benign.workplan so that the job's code fingerprint holds only what it runs: the
refinement's analysis and the packing of runs into jobs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from benign.analysis.refinement import convergence_runs, refinement_runs
from benign.analysis.theory import Criteria
from benign.plan import resources


def refine_setting(sweep: str) -> str:
    """The setting of the refinement runs of a sweep (docs/regimes.md#refinement)."""
    return f"{sweep}_refine"


def convergence_setting(sweep: str) -> str:
    """The setting of the step-check runs of a sweep (docs/regimes.md#step-convergence)."""
    return f"{sweep}_convergence"


@dataclass(frozen=True)
class RefinementJob:
    """The refinement checkpoint's job (workflow/scripts/plan_refinement.py), worked out from the
    config: the rule's params are these fields as plain values, so changing one replans; the
    script builds the job back from them and calls :meth:`jobs` on the coarse runs."""

    horizons: list[int]  # refined at each: every horizon a table reads crossings at (fits', along time)
    fit_horizon: int  # the step check's horizon: the fits' longest
    refine: dict  # synthetic.boundary_fits.refine
    convergence: dict | None  # synthetic.boundary_fits.convergence
    regime: dict  # the regime criteria (benign.analysis.theory.Criteria)
    log_points: int  # the refined sweep's, which its new runs keep
    settings: list[str | None]  # the refinement's and the step check's
    prefixes: list[str]  # their jobs' ids, before their number
    cluster: dict  # what the jobs are packed under: device kind and ceilings

    def params(self) -> dict:
        """The fields as plain values: the rule's params, which Snakemake compares run to run."""
        return asdict(self)

    def jobs(self, runs, curves) -> dict[str, list[dict]]:
        """{job id: runs} of the refinement and the step check, from the coarse ``runs`` and
        ``curves``."""
        criteria, cluster = Criteria(**self.regime), resources.Cluster(**self.cluster)
        refine, convergence = self.refine, self.convergence
        planned = refinement_runs(runs, curves, self.horizons, refine["points"], refine["seeds"], self.log_points,
                                  criteria, self.settings[0])  # fmt: skip
        out = resources.pack(planned, self.prefixes[0], refine["batches_per_job"], cluster)
        if convergence:
            checked = convergence_runs(runs, curves, self.fit_horizon, refine["points"], convergence["seeds"],
                                       refine["seeds"], convergence["factor"], self.log_points, criteria,
                                       self.settings[1])  # fmt: skip
            out |= resources.pack(checked, self.prefixes[1], convergence["batches_per_job"], cluster)
        return out
