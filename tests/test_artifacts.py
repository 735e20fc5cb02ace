"""The artifact table (benign/config/artifacts.py) against the functions it calls: every entry
gives its function and its view exactly the arguments they declare."""

from __future__ import annotations

import inspect
from importlib import import_module

import pytest

from benign.config import artifacts
from benign.config.artifacts import ARTIFACTS, Artifact, View
from benign.config.schema import default
from benign.synthetic import schema
from tests.helpers import frames

CONSTANTS = {
    "atlas_settings",
    "convergence",
    "delay_scan",
    "one_step",
    "real_notes",
}  # workflow/rules/common.smk's CONSTANTS


def resolve(target: str):
    module, _, name = target.partition(":")
    return getattr(import_module(module), name)


def keyword_signature(function) -> artifacts.Signature:
    """What :func:`benign.config.artifacts.signature` reads from the source, from the imported function."""
    params = inspect.signature(function).parameters.values()
    named = [p for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    return artifacts.Signature(
        frozenset(p.name for p in named),
        frozenset(p.name for p in named if p.default is p.empty),
        any(p.kind == p.VAR_KEYWORD for p in params),
    )


def test_the_table_has_no_problem():
    assert artifacts.problems(constants=CONSTANTS) == []


@pytest.mark.parametrize("artifact", ARTIFACTS.values(), ids=lambda a: a.name)
def test_every_function_is_called_with_exactly_its_arguments(artifact):
    """Against the imported functions: every argument without a default gets a value, and every
    value has an argument."""
    function = inspect.signature(resolve(artifact.function)).parameters
    required = {name for name, p in function.items() if p.default is p.empty}
    assert required <= artifact.arguments() <= set(function)
    if artifact.view:
        view = inspect.signature(resolve(artifact.view.function)).parameters
        given = set(artifact.view.reads) | set(artifact.view.params)
        assert {name for name, p in view.items() if p.default is p.empty} <= given <= set(view)
        assert set(artifact.view.reads) <= set(artifact.inputs)


@pytest.mark.parametrize(
    "target",
    sorted({f for a in ARTIFACTS.values() for f in (a.function, a.view.function if a.view else "") if f}),
)
def test_the_signatures_read_from_source_are_the_imported_ones(target):
    assert artifacts.signature(target) == keyword_signature(resolve(target))


def test_each_view_returns_what_its_source_says():
    from benign.analysis import theory
    from benign.tables import real

    runs, curves = frames.runs([{"setting": "atlas"}]), schema.CURVES.empty_table().to_pandas()
    given = {
        "benign.analysis.theory:atlas_view": theory.atlas_view(
            runs, curves, ["atlas"], [100], default("synthetic.regime")
        ),
        "benign.analysis.theory:sweeps_view": theory.sweeps_view(runs, curves, ["atlas"]),
        "benign.tables.real:grid_view": real.grid_view(frames.real_runs([{}]), {"n": [20], "seeds": [42]}),
    }
    assert given.keys() == {a.view.function for a in ARTIFACTS.values() if a.view}
    for target, values in given.items():
        assert set(values) == artifacts.view_gives(target), target


@pytest.fixture
def root(tmp_path):
    """A repository with one plotting module and the captions of the artifacts below."""
    (tmp_path / "plots").mkdir()
    (tmp_path / "plots/__init__.py").write_text("")
    (tmp_path / "plots/figures.py").write_text(
        "from plots.views import window as window\n\n\n"
        "def curve(runs, stem, width=2.0):\n    pass\n\n\n"
        "def framed(runs, frame, stem):\n    pass\n"
    )
    (tmp_path / "plots/views.py").write_text(
        "def window(runs, steps):\n"
        "    if steps:\n        return {'runs': runs, 'frame': steps}\n"
        "    return {'runs': runs, 'frame': None, 'extra': 1}\n"
    )
    (tmp_path / "workflow/report").mkdir(parents=True)
    for name in ("curve", "framed"):
        (tmp_path / f"workflow/report/{name}.rst").write_text("caption")
    return tmp_path


def problems_of(root, *entries):
    return artifacts.problems(entries, constants=CONSTANTS, root=root)


def test_a_call_that_misses_or_adds_an_argument_is_refused(root):
    base = dict(kind="figure", paper="", title="t", section="Synthetic", inputs={"runs": "runs@token"})
    assert problems_of(root, Artifact("curve", function="plots.figures:curve", params={"width": "a.b"}, **base)) == []
    renamed = Artifact("curve", function="plots.figures:curve", params={"line_width": "a.b"}, **base)
    assert problems_of(root, renamed) == [
        "curve (figure): function plots.figures:curve: takes no argument(s) ['line_width']"
    ]
    missing = Artifact("curve", function="plots.figures:curve", **{**base, "inputs": {}})
    assert problems_of(root, missing) == [
        "curve (figure): function plots.figures:curve: no value for its argument(s) ['runs']"
    ]
    unknown = Artifact("curve", function="plots.figures:curves", **base)
    assert problems_of(root, unknown) == ["curve (figure): plots.figures defines no function curves"]
    no_caption = Artifact("line", function="plots.figures:curve", **base)
    assert problems_of(root, no_caption) == ["line (figure): no caption workflow/report/line.rst"]


def test_a_view_gives_only_what_every_return_holds(root):
    base = dict(kind="figure", paper="", title="t", section="Synthetic", inputs={"runs": "runs@token"})
    # the view is imported into the figures' module: followed to its definition
    view = View("plots.figures:window", reads=("runs",), gives=("runs", "frame"), params={"steps": "a.b"})
    assert problems_of(root, Artifact("framed", function="plots.figures:framed", view=view, **base)) == []
    extra = View("plots.views:window", reads=("runs",), gives=("runs", "frame", "extra"), params={"steps": "a.b"})
    assert problems_of(root, Artifact("framed", function="plots.figures:framed", view=extra, **base)) == [
        "framed (figure): view plots.views:window: gives no ['extra']",
        "framed (figure): function plots.figures:framed: takes no argument(s) ['extra']",
    ]
    unread = View("plots.views:window", reads=("runs", "curves"), gives=("runs", "frame"), params={"steps": "a.b"})
    assert problems_of(root, Artifact("framed", function="plots.figures:framed", view=unread, **base)) == [
        "framed (figure): view plots.views:window: reads ['curves'], which are not inputs",
        "framed (figure): view plots.views:window: takes no argument(s) ['curves']",
    ]


def test_entry_fields_are_checked(root):
    base = dict(kind="figure", paper="", title="t", section="Synthetic", function="plots.figures:curve")
    assert problems_of(root, Artifact("curve", inputs={"runs": "runs@model"}, **base)) == [
        "curve (figure): input runs: 'runs@model' names the model of a per-model artifact"
    ]
    assert problems_of(root, Artifact("curve", inputs={"runs": "frames"}, **base)) == [
        "curve (figure): input runs: unknown kind 'frames' (benign.config.artifacts.INPUT_KINDS)"
    ]
    assert problems_of(root, Artifact("curve", inputs={"runs": "runs"}, params={"width": "@widths"}, **base)) == [
        "curve (figure): param width: the workflow has no constant 'widths'"
    ]
    per_model = Artifact("curve", inputs={"runs": "runs@model"}, params={"width": artifacts.Value(3.0)},
                         models={"token": "", "encoder": ""}, **base)  # fmt: skip
    assert problems_of(root, per_model) == []
    assert [per_model.rule(m) for m in per_model.models] == ["figure_curve", "figure_encoder_curve"]
    assert per_model.files("encoder") == ["results/figures/encoder_curve.png", "results/figures/encoder_curve.pdf"]


def test_the_real_tables_are_two_entries_with_their_etas():
    cfg = {"real": {"grid": {"n": [20], "seeds": [42]}}}
    table2, table6 = ARTIFACTS["table/real_eta0.1"], ARTIFACTS["table/real_eta0_0.2"]
    assert [artifacts.param_value(cfg, t.params["etas"], {}) for t in (table2, table6)] == [[0.1], [0.0, 0.2]]
    assert (table2.rule(), table6.rule()) == ("table_real_eta0_1", "table_real_eta0_0_2")
    assert table2.files() == ["results/tables/real_eta0.1.csv", "results/tables/real_eta0.1.md"]
    assert artifacts.param_value(cfg, table2.view.params["grid"], {}) == {"n": [20], "seeds": [42]}
