"""The refinement checkpoint's job (benign/plan/refinement_job.py): worked out from the config by the
plan, it travels as plain params and comes back the same; it refines at every horizon a table
reads crossings at, checks steps at the fits' longest, and packs its runs under the config's
ceilings (a hand-made coarse atlas of one (d, n) line)."""

from __future__ import annotations

import copy
import json

import yaml

from benign.analysis.refinement import convergence_runs, refinement_runs
from benign.plan import schema
from benign.plan.refinement_job import RefinementJob
from benign.plan.resources import pack
from benign.workplan import WorkPlan
from tests.analysis.test_refinement import CLUSTER, CRITERIA, _line
from tests.helpers.workflow_utils import ROOT


def default_job() -> RefinementJob:
    cfg = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    return WorkPlan.load(cfg, schema.PATH).refinement_job()


def test_the_job_travels_as_plain_params_and_comes_back_the_same():
    job = default_job()
    params = job.params()
    assert json.loads(json.dumps(params)) == params  # plain values: Snakemake compares their repr
    assert RefinementJob(**copy.deepcopy(params)) == job


def test_the_job_refines_where_the_tables_read_and_checks_steps_at_the_longest_fit():
    cfg = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    fits = cfg["synthetic"]["boundary_fits"]
    job = WorkPlan.load(copy.deepcopy(cfg), schema.PATH).refinement_job()
    assert job.horizons == sorted({*fits["horizons"], *(fits.get("along_time") or ())})
    assert job.fit_horizon == max(fits["horizons"])
    assert job.prefixes == [f"{fits['model']}_{s}" for s in job.settings]
    assert set(job.cluster) == {"device", "max_mem_mb", "max_runtime_min"}  # the group does not replan


def test_the_jobs_are_the_refinement_and_the_step_check_packed_under_their_prefixes():
    """On a hand-made line (tests/analysis/test_refinement.py): the job's jobs are the refinement's runs at
    its horizons and the step check's at its longest fit, each packed under its own prefix."""
    runs, curves = _line(fitted_above=6.0, selects_from=3.0)
    refine = {"sweep": "atlas", "points": 1, "seeds": [3, 4], "batches_per_job": 1}
    convergence = {"seeds": [1, 3], "factor": 2, "batches_per_job": 2}
    job = RefinementJob(horizons=[10, 100], fit_horizon=100, refine=refine, convergence=convergence,
                        regime=vars(CRITERIA), log_points=5, settings=["atlas_refine", "atlas_convergence"],
                        prefixes=["token_atlas_refine", "token_atlas_convergence"],
                        cluster={"device": "cpu", "max_mem_mb": None, "max_runtime_min": None})  # fmt: skip
    refined = refinement_runs(runs, curves, [10, 100], 1, [3, 4], 5, CRITERIA, "atlas_refine")
    checked = convergence_runs(runs, curves, 100, 1, [1, 3], [3, 4], 2, 5, CRITERIA, "atlas_convergence")
    assert refined and checked
    expected = pack(refined, "token_atlas_refine", 1, CLUSTER) | pack(checked, "token_atlas_convergence", 2, CLUSTER)
    assert job.jobs(runs, curves) == expected
    assert set(job.jobs(runs, curves)) >= {"token_atlas_refine_00", "token_atlas_convergence_00"}
    alone = RefinementJob(**{**job.params(), "convergence": None}).jobs(runs, curves)
    assert alone == pack(refined, "token_atlas_refine", 1, CLUSTER)
