"""The workflow's plan (benign/workplan.py), which the rules loop over: on the default config it
builds every artifact, computes the params the artifact table names, resolves each kind of input
to the rule outputs that make it, and gives each wildcard a pattern its values match; a config
without a sweep builds none of the artifacts that read it."""

from __future__ import annotations

import copy
import inspect
import re

import pytest
import yaml

from benign.artifacts import synthetic as synthetic_entries
from benign.artifacts.entry import ALL, FITS, MODEL, FromPlan, Key, SweepOf
from benign.artifacts.synthetic import ONE_STEP
from benign.artifacts.synthetic_inputs import ALIGNMENT, FITS_TABLE, RUNS, SWEEP_RUNS
from benign.artifacts.table import ARTIFACTS
from benign.plan import schema
from benign.plan.refinement_job import convergence_setting, refine_setting
from benign.workplan import WorkPlan
from tests.helpers.workflow_utils import ROOT


def work(cfg: dict | None = None) -> WorkPlan:
    cfg = copy.deepcopy(cfg) if cfg else yaml.safe_load((ROOT / "config/config.yaml").read_text())
    return WorkPlan.load(cfg, schema.PATH)


@pytest.fixture(scope="module")
def default():
    return work()


def test_the_default_config_builds_every_artifact_for_every_model_it_names(default):
    conditions = {a.when for a in ARTIFACTS.values() if a.when is not None}
    assert all(c(plan=default.plan, model="token") if "model" in inspect.signature(c).parameters else c(plan=default.plan)
               for c in conditions)  # fmt: skip
    drawn = {(a.key, m) for a, m in default.drawn()}
    assert {key for key, _ in drawn} == set(ARTIFACTS)
    for art in ARTIFACTS.values():
        models = [m for m in default.models if art.models and default.built(art, m)]
        assert {m for key, m in drawn if key == art.key} == (set(models) if art.models else {None})
    assert default.outputs("results/summary.md")[-1] == "results/summary.md"


def test_a_config_without_a_sweep_builds_none_of_the_artifacts_that_read_it(default):
    cfg = copy.deepcopy(default.config)
    del cfg["synthetic"]["token"]["sweeps"][ONE_STEP]
    without = work(cfg)
    assert synthetic_entries.has_one_step(without.plan) is False
    gone = {a.key for a, _ in default.drawn()} - {a.key for a, _ in without.drawn()}
    assert gone == {key for key, a in ARTIFACTS.items() if a.when is synthetic_entries.has_one_step} and gone


def test_the_params_read_the_config_and_the_plan(default):
    fits = ARTIFACTS["table/regime_boundaries"]
    params, view = default.params(fits.params), default.params(fits.view.params)
    sweep = default.fits["refine"]["sweep"]
    for name, spec in fits.params.items():
        assert isinstance(spec, Key)
        assert params[name] == default.config["synthetic"]["boundary_fits"][spec.path[-1]]
    assert {name for name, spec in fits.view.params.items() if isinstance(spec, FromPlan)} == {
        "settings",
        "convergence",
    }
    assert view["settings"] == default.atlas_settings == [*default.fits["sweeps"], refine_setting(sweep)]
    assert view["convergence"] == {
        "setting": convergence_setting(sweep),
        "factor": default.fits["convergence"]["factor"],
    }
    notes = default.params(ARTIFACTS["table/real_eta0.1"].params)["notes"]
    assert notes == {d: default.config["real"]["datasets"][d].get("note") for d in default.config["real"]["use"]}


def test_each_input_kind_resolves_to_its_files(default):
    expand = lambda pattern, **values: [f"{pattern}:{v}" for vs in values.values() for v in vs]
    fits_model = default.fits["model"]
    other = next(m for m in default.models if m != fits_model)
    assert default.input_files(RUNS(ALL), None, expand) == [
        f"results/synthetic/{m}/runs.parquet" for m in default.models
    ]
    assert default.input_files(RUNS(MODEL), other, expand) == [f"results/synthetic/{other}/runs.parquet"]
    assert default.input_files(FITS_TABLE(MODEL), fits_model, expand) == "results/tables/regime_boundaries.csv"
    assert default.input_files(FITS_TABLE(MODEL), other, expand) == []  # no atlas of this model
    assert default.input_files(SWEEP_RUNS(FITS), None, expand) == [
        f"results/synthetic/sweeps/{fits_model}/{sweep}/runs.parquet" for sweep in default.fits["sweeps"]
    ]
    named = SWEEP_RUNS(SweepOf("token_p_w0", synthetic_entries.W_CONTROL))
    assert default.input_files(named, None, expand) == ["results/synthetic/sweeps/token_p_w0/atlas_w0/runs.parquet"]
    alignment = default.input_files(ALIGNMENT(), None, expand)
    assert alignment == [f"results/max_margin/{{max_margin_model}}.parquet:{m}" for m in default.plan.max_margin_runs]
    assert alignment


def test_no_input_kind_names_a_rule():
    """Artifacts find what they read by its file (benign.core.paths), as Snakemake does: no kind
    holds a rule's name, and the workflow looks no rule up by one."""
    from benign.artifacts.table import KINDS

    for kind in KINDS.values():
        assert kind.path.startswith("results/") and not hasattr(kind, "rule"), kind.name
    sources = [p.read_text() for p in (ROOT / "workflow").rglob("*.smk")] + [(ROOT / "Snakefile").read_text()]
    assert not any("getattr(rules" in text for text in sources)


def test_every_planned_value_matches_its_wildcards_pattern(default):
    patterns = {k: re.compile(f"(?:{v})") for k, v in default.wildcard_constraints().items()}
    for job in default.plan.synthetic_jobs:
        assert patterns["job"].fullmatch(job)
    for cell in default.plan.real_cells:
        assert patterns["cell"].fullmatch(cell)
    model = default.fits["model"]
    for setting in (default.refine_setting, default.convergence_setting):
        assert patterns["rjob"].fullmatch(f"{model}_{setting}_3")
    assert not patterns["rjob"].fullmatch(f"{model}_atlas_3")


def test_a_training_jobs_fingerprint_holds_the_modules_of_its_models(default):
    job, runs = next(iter(default.plan.synthetic_jobs.items()))
    assert default.train_modules(runs) == [
        "benign.synthetic.models." + ("encoder" if runs[0]["model"] == "encoder" else "token_selection")
    ]
    for dataset in default.datasets:
        assert default.features_module(dataset).startswith("benign.real.")
        assert "note" not in default.dataset_entry(dataset) and default.dataset_entry(dataset)["name"] == dataset


def test_the_limit_reads_the_fitted_sweeps_jobs_alone_and_refines_finer_than_the_atlas(default):
    """The limit (and the atlas's priority) reads the jobs holding runs of the fitted sweeps, no
    other job of the model; its crossings are refined to a quarter of the atlas's resolution in ln."""
    sweeps = set(default.fits["sweeps"])
    fitted = set(default.fitted_jobs)
    for job in default.jobs_of(default.fits["model"]):
        holds = any(sweeps & set(run["sweeps"]) for run in default.plan.synthetic_jobs[job])
        assert (job in fitted) == holds, job
    assert fitted and fitted < set(default.jobs_of(default.fits["model"]))
    assert default.limit_resolution**4 == pytest.approx(default.fits["resolution"])
    assert default.limit_resolution < default.fits["resolution"]


def test_the_atlas_goes_first_and_every_other_synthetic_job_longest_first(default):
    """The fitted atlas's jobs get the first priority; every other synthetic job one below the
    real half's training, higher for a longer forecast, so the last to start are short."""
    others = [job for job in default.plan.synthetic_jobs if job not in default.fitted_jobs]
    for job in default.fitted_jobs:
        assert default.synthetic_priority(job, 60, 20) == 60
    seconds = {job: default.synthetic_need(default.plan.synthetic_jobs[job]).seconds for job in others}
    priority = {job: default.synthetic_priority(job, 60, 20) for job in others}
    assert set(priority.values()) <= set(range(1, 20)) and len(set(priority.values())) > 3, priority
    by_time = sorted(others, key=seconds.get)
    assert [priority[j] for j in by_time] == sorted(priority.values())
