"""The artifact table (benign/artifacts/) against the functions it holds: every entry gives its
function and its view exactly the arguments they declare, and each half loads nothing of the
other."""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import TypedDict

import pandas as pd
import pytest
import yaml

from benign.artifacts import entry
from benign.artifacts.entry import ALL, MODEL, Artifact, FromPlan, InputKind, Key, Value, View
from benign.artifacts.table import ARTIFACTS, KINDS
from benign.core import fingerprint
from benign.plan import schema as config_schema
from benign.plan.schema import default
from benign.synthetic import schema
from tests.helpers import frames


def test_the_table_has_no_problem():
    assert entry.problems(ARTIFACTS.values(), KINDS) == []


def test_each_view_returns_what_its_annotation_says():
    """A view's TypedDict is what the check reads: every view, called, returns exactly its keys."""
    from benign.analysis import theory
    from benign.tables import real

    runs, curves = frames.runs([{"setting": "atlas"}]), schema.CURVES.empty_table().to_pandas()
    given = {
        theory.atlas_view: theory.atlas_view(runs, curves, ["atlas"], [100], default("synthetic.regime")),
        theory.sweeps_view: theory.sweeps_view(runs, curves, ["atlas"]),
        real.grid_view: real.grid_view(frames.real_runs([{}]), {"n": [20], "seeds": [42]}),
    }
    assert given.keys() == {a.view.function for a in ARTIFACTS.values() if a.view}
    for view, values in given.items():
        assert set(values) == entry.view_gives(view), view


@pytest.mark.parametrize("half", ["synthetic", "real"])
def test_each_half_loads_nothing_of_the_other(half):
    """A render's fingerprint is its half's module: the real half's holds no synthetic module, and
    the synthetic half's no real-data one, so an edit to one half re-renders nothing of the other."""
    other = {"synthetic": "benign.real", "real": "benign.synthetic"}[half]
    closure = fingerprint.closure(f"benign.artifacts.{half}")
    assert not [m for m in closure if m == other or m.startswith(other + ".")]
    assert {a.home for a in ARTIFACTS.values()} == {"benign.artifacts.synthetic", "benign.artifacts.real"}


# a small table of its own, to check what the check refuses
RUNS_KIND = InputKind("runs", pd.read_parquet, "results/synthetic/{model}/runs.parquet", per_model=True)
KIND = {"runs": RUNS_KIND}


def curve(runs, stem, width=2.0):
    pass


def framed(runs, frame, stem):
    pass


class Window(TypedDict):
    runs: object
    frame: object


def window(runs, steps) -> Window:
    return Window(runs=runs, frame=steps)


def unannotated(runs, steps):
    return {"runs": runs, "frame": steps}


@pytest.fixture
def root(tmp_path):
    """A repository with the captions of the artifacts below."""
    (tmp_path / "workflow/report").mkdir(parents=True)
    for name in ("curve", "framed"):
        (tmp_path / f"workflow/report/{name}.rst").write_text("caption")
    return tmp_path


def problems_of(root, *entries):
    return entry.problems(entries, KIND, root=root, schema=config_schema.load())


BASE = dict(kind="figure", paper="", title="t", section="Synthetic", inputs={"runs": RUNS_KIND("token")})
NAME = f"{__name__}:"


def test_a_call_that_misses_or_adds_an_argument_is_refused(root):
    assert problems_of(root, Artifact("curve", function=curve, params={"width": Key("synthetic.regime")}, **BASE)) == []
    renamed = Artifact("curve", function=curve, params={"line_width": Key("synthetic.regime")}, **BASE)
    assert problems_of(root, renamed) == [f"curve (figure): function {NAME}curve: takes no argument(s) ['line_width']"]
    missing = Artifact("curve", function=curve, **{**BASE, "inputs": {}})
    assert problems_of(root, missing) == [
        f"curve (figure): function {NAME}curve: no value for its argument(s) ['runs']"
    ]
    no_caption = Artifact("line", function=curve, **BASE)
    assert problems_of(root, no_caption) == ["line (figure): no caption workflow/report/line.rst"]


def test_a_view_gives_only_what_its_annotation_holds(root):
    view = View(window, reads=("runs",), gives=("runs", "frame"), params={"steps": Key("synthetic.regime")})
    assert problems_of(root, Artifact("framed", function=framed, view=view, **BASE)) == []
    extra = View(window, reads=("runs",), gives=("runs", "frame", "extra"), params={"steps": Key("synthetic.regime")})
    assert problems_of(root, Artifact("framed", function=framed, view=extra, **BASE)) == [
        f"framed (figure): view {NAME}window: gives no ['extra']",
        f"framed (figure): function {NAME}framed: takes no argument(s) ['extra']",
    ]
    unread = View(window, reads=("runs", "curves"), gives=("runs", "frame"), params={"steps": Key("synthetic.regime")})
    assert problems_of(root, Artifact("framed", function=framed, view=unread, **BASE)) == [
        f"framed (figure): view {NAME}window: reads ['curves'], which are not inputs",
        f"framed (figure): view {NAME}window: takes no argument(s) ['curves']",
    ]
    bare = View(unannotated, reads=("runs",), gives=("runs", "frame"), params={"steps": Key("synthetic.regime")})
    assert problems_of(root, Artifact("framed", function=framed, view=bare, **BASE)) == [
        f"framed (figure): view {NAME}unannotated: its return must be annotated with a TypedDict"
    ]


def test_entry_fields_are_checked(root):
    base = dict(kind="figure", paper="", title="t", section="Synthetic", function=curve)
    assert problems_of(root, Artifact("curve", inputs={"runs": RUNS_KIND(MODEL)}, **base)) == [
        "curve (figure): input runs: runs of MODEL names the model of a per-model artifact"
    ]
    frames = InputKind("frames", pd.read_parquet, "results/synthetic/frames.parquet")
    assert problems_of(root, Artifact("curve", inputs={"runs": frames()}, **base)) == [
        "curve (figure): input runs: unknown kind 'frames' (the kinds: ['runs'])"
    ]
    assert problems_of(root, Artifact("curve", inputs={"runs": RUNS_KIND()}, **base)) == [
        "curve (figure): input runs: runs is read per model: say whose (ALL, FITS, MODEL or a model)"
    ]
    assert problems_of(root, Artifact("curve", inputs={"runs": "runs@token"}, **base)) == [
        "curve (figure): input runs: 'runs@token' is neither an Input nor a File"
    ]

    def width(config):  # a param computed from the plan takes the plan
        return 3

    widths = Artifact("curve", inputs={"runs": RUNS_KIND(ALL)}, params={"width": FromPlan(width)}, **base)
    name = "tests.artifacts.test_entry:test_entry_fields_are_checked.<locals>.width"
    assert problems_of(root, widths) == [
        f"curve (figure): param width: {name}: no value for its argument(s) ['config']",
        f"curve (figure): param width: {name}: takes no argument(s) ['plan']",
    ]
    later = Artifact("curve", inputs={"runs": RUNS_KIND(ALL)}, when=lambda plan: True,
                     params={"width": FromPlan(lambda plan: 3)}, **base)  # fmt: skip
    assert problems_of(root, later) == []
    typo = Artifact("curve", inputs={"runs": RUNS_KIND(ALL)}, params={"width": Key("synthetic.regim")}, **base)
    assert problems_of(root, typo) == ["curve (figure): param width: the config schema has no key synthetic.regim"]
    per_model = Artifact("curve", inputs={"runs": RUNS_KIND(MODEL)}, params={"width": Value(3.0)},
                         models={"token": "", "encoder": ""}, prefix=lambda m: "" if m == "token" else f"{m}_",
                         **base)  # fmt: skip
    assert problems_of(root, per_model) == []
    assert [per_model.rule(m) for m in per_model.models] == ["figure_curve", "figure_encoder_curve"]
    assert per_model.files("encoder") == ["results/figures/encoder_curve.png", "results/figures/encoder_curve.pdf"]
    no_prefix = Artifact("curve", inputs={"runs": RUNS_KIND(MODEL)}, models={"token": ""}, **base)
    assert problems_of(root, no_prefix) == ["curve (figure): a per-model artifact with no prefix"]


def test_the_real_tables_are_two_entries_with_their_etas():
    plan = SimpleNamespace(config=SimpleNamespace(raw={"real": {"grid": {"n": [20], "seeds": [42]}}}))
    table2, table6 = ARTIFACTS["table/real_eta0.1"], ARTIFACTS["table/real_eta0_0.2"]
    assert [entry.param_value(plan, t.params["etas"]) for t in (table2, table6)] == [[0.1], [0.0, 0.2]]
    assert (table2.rule(), table6.rule()) == ("table_real_eta0_1", "table_real_eta0_0_2")
    assert table2.files() == ["results/tables/real_eta0.1.csv", "results/tables/real_eta0.1.md"]
    assert entry.param_value(plan, table2.view.params["grid"]) == {"n": [20], "seeds": [42]}


@pytest.mark.slow  # Snakemake on a copy of the repository: beside the end-to-end tests (ci/test.sh)
def test_a_config_without_boundary_fits_plans_its_heatmaps_without_the_atlas(tmp_path):
    """The heatmaps read the atlas's table only where it is fitted: without
    ``synthetic.boundary_fits`` the workflow still parses, and draws them with no fits."""

    from tests.helpers.workflow_utils import copy_repo, planned_jobs

    repo = copy_repo(tmp_path / "repo")
    path = repo / "config/config.yaml"
    cfg = yaml.safe_load(path.read_text())
    del cfg["synthetic"]["boundary_fits"]
    path.write_text(yaml.safe_dump(cfg))
    jobs = planned_jobs(repo)
    assert jobs.get("figure_loss_heatmap") == 1 and "table_regime_boundaries" not in jobs, jobs


@pytest.mark.slow  # Snakemake on a copy of the repository: beside the end-to-end tests (ci/test.sh)
def test_an_atlas_of_its_own_trains_only_its_jobs(tmp_path):
    """config/atlas_only.yaml, the worked example of docs/regimes.md: its regime-boundaries table
    and regime map wait for the atlas's own training jobs and the refinement the checkpoint
    plans from them, no other sweep's or model's (the atlas's artifacts read its sweep's tables,
    not the model's)."""
    from tests.helpers.workflow_utils import copy_repo, snakemake

    repo = copy_repo(tmp_path / "repo")
    targets = ("results/tables/regime_boundaries.csv", "results/figures/regime_map.png")
    out = snakemake(repo, "-n", *targets, "--configfile", "config/atlas_only.yaml")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    rules = set(re.findall(r"^(?:local)?(?:rule|checkpoint) (\w+):", out.stdout, flags=re.M))
    assert rules == {"train_synthetic", "plan_refinement", "aggregate_sweep", "table_regime_boundaries",
                     "figure_regime_map"}, rules  # fmt: skip
    trained = re.findall(r"wildcards: job=(\S+)", out.stdout)
    assert trained and all(job.startswith("token_atlas_") for job in trained), trained


def test_a_per_sweep_input_names_the_fitted_sweeps_or_one_sweep():
    """A per-sweep kind reads the fitted sweeps (FITS) or a sweep named by the plan (SweepOf);
    a model's name alone says no sweep, and the entry is refused with it."""
    from benign.artifacts.synthetic import delay_scan
    from benign.artifacts.synthetic_inputs import SWEEP_RUNS

    def scan(of):
        return Artifact("scan", "table", "", "the delay scan", "Tables", function=delay_scan.delay_scan,
                        inputs={"runs": SWEEP_RUNS(of), "curves": SWEEP_RUNS(of)})  # fmt: skip

    ok = scan(entry.SweepOf("token", "delay_scan"))
    assert entry._spec_problems(ok, "runs", ok.inputs["runs"], KINDS, entry.ROOT) == []
    bad = scan("token")
    assert entry._spec_problems(bad, "runs", bad.inputs["runs"], KINDS, entry.ROOT) == [
        "input runs: sweep_runs is read per sweep: name FITS or a SweepOf, not 'token'"
    ]
