"""The run spec (benign/synthetic/spec.py) is the one list of a synthetic run's parameters: every
other list is built from it, and no module keeps one by hand."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from benign.cli import _parser
from benign.plan import resources, schema
from benign.synthetic import flow, registry, spec
from benign.synthetic.schema import ALIGNMENT, RUNS

ROOT = Path(__file__).resolve().parents[2]
PARAMETERS = {f.name for f in spec.FIELDS}


def test_the_runs_table_has_every_parameter_that_changes_the_numbers():
    names = RUNS.names
    assert set(spec.NUMBERS) <= set(names) and "setting" in names
    assert not set(names) & {"log_every", "log_points", "record_attention"}
    assert [n for n in ALIGNMENT.names if n in PARAMETERS] == list(spec.COLUMNS)


def test_the_schema_takes_its_run_keys_from_the_spec():
    full = schema.load()
    defaults = full["properties"]["synthetic"]["properties"]["defaults"]
    assert list(defaults["properties"]) == list(defaults["required"]) == list(spec.DEFAULT_KEYS)
    assert list(full["$defs"]["sweep"]["properties"]["axes"]["properties"]) == list(spec.SWEEP_AXES)
    fixed = full["$defs"]["sweep"]["properties"]["fixed"]["properties"]
    own = {f.name for f in spec.FIELDS if f.metadata["fixed"]}
    assert own == {"engine", "step_size", "integrator", "flow_tol", "w_dtype"}
    assert set(fixed) == (set(spec.SWEEP_AXES) | set(spec.DEFAULT_KEYS) | own) - {"steps"}


def test_the_cli_has_a_flag_for_every_parameter_that_changes_the_numbers():
    sub = next(a for a in _parser()._actions if a.dest == "command").choices["synthetic"]
    flags = {a.dest for a in sub._actions} - {"help", "device", "json"}
    assert flags == set(spec.NUMBERS)


def test_the_planner_and_the_trainer_share_one_batch_key():
    run = spec.RunSpec(model="encoder", mlp_dim=16, d=40, signal_norm=3.0, seed=7, steps=5)
    as_dict = dataclasses.asdict(run)
    assert run.batch_key() == spec.batch_key(as_dict)
    twin = dict(as_dict, signal_norm=4.0)
    assert resources.batches([as_dict, twin, dict(as_dict, seed=8)]) == [[as_dict, twin], [dict(as_dict, seed=8)]]
    other = dataclasses.replace(run, signal_norm=4.0, lr=0.1, eta=0.3, rho=0.2)  # not batch fields
    assert other.batch_key() == run.batch_key()
    for name in spec.BATCH_KEYS:  # each batch field separates batches
        if name in ("integrator", "flow_tol"):  # the encoder has gradient descent only: the token model's
            token = dataclasses.replace(run, model="token", mlp_dim=None)
            flowing = dataclasses.replace(token, integrator="flow")
            tighter = dataclasses.replace(flowing, flow_tol=0.1)
            assert len({token.batch_key(), flowing.batch_key(), tighter.batch_key()}) == 3
            continue
        if name == "w_dtype":  # the encoder trains no W: the token model's two precisions
            token = dataclasses.replace(run, model="token", mlp_dim=None, integrator="flow")
            assert dataclasses.replace(token, w_dtype="float32").batch_key() != token.batch_key()
            continue
        value = getattr(run, name)
        changed = {"model": "token", "mlp_dim": None}.get(name, value * 2 if not isinstance(value, str) else value)
        if name == "model":
            moved = dataclasses.replace(run, model="token", mlp_dim=None)
        elif name == "engine":  # the encoder has one engine: compare the token model's two
            token = dataclasses.replace(run, model="token", mlp_dim=None, d=400)  # the Gram engine needs d >= 324
            assert dataclasses.replace(token, engine="gram").batch_key() != token.batch_key()
            continue
        elif name == "mlp_dim":
            moved = dataclasses.replace(run, mlp_dim=32)
        else:
            moved = dataclasses.replace(run, **{name: changed})
        assert moved.batch_key() != run.batch_key(), name


def test_the_run_id_reads_exactly_the_parameters_that_change_the_numbers():
    run = spec.RunSpec()
    for f in spec.FIELDS:
        if f.name in (
            "model",
            "flow_tol",
            "w_dtype",
            *spec.MODEL_KEYS,
        ):  # another model's, the flow's (below, and w_dtype: test_w_in_float32_is_another_run)
            continue
        value = getattr(run, f.name)
        if value is None:  # the step size, unset: lr then
            other = 5.0
        elif isinstance(value, tuple):
            other = (*value, "x")
        else:
            other = not value if isinstance(value, bool) else value + "x" if isinstance(value, str) else value + 2
        other = {"engine": "gram", "integrator": "flow"}.get(f.name, other)
        changed = dataclasses.replace(run, **{f.name: other})
        assert (changed.run_id != run.run_id) == (f.name in spec.NUMBERS), f.name
    encoder = dataclasses.replace(run, model="encoder", mlp_dim=16)
    assert len({run.run_id, encoder.run_id, dataclasses.replace(encoder, mlp_dim=32).run_id}) == 3
    flowing = dataclasses.replace(run, integrator="flow")
    assert flowing.flow_tol == flow.TOL  # the default tolerance, recorded
    assert len({run.run_id, flowing.run_id, dataclasses.replace(flowing, flow_tol=0.1).run_id}) == 3


# Run ids computed before the integrator existed: a run that does not name one keeps its id.
OLD_IDS = [
    (dict(), "token-d2000-m20-s42-76b19f5d15"),
    (dict(engine="gram", d=100000, n=10, T=8, step_size=5.0, steps=10000, signal_norm=16.0, seed=3),
     "token-gram-d100000-m16-s3-e9a4c2b84f"),
    (dict(model="encoder", mlp_dim=16, d=40), "encoder-d40-m20-s42-d7e508aedb"),
    (dict(model="token_p_w0", engine="gram", d=10000, n=10, step_size=5.0), "token_p_w0-gram-d10000-m20-s42-480b4e0462"),
]  # fmt: skip


@pytest.mark.parametrize(("fields", "run_id"), OLD_IDS)
def test_runs_that_do_not_name_the_integrator_keep_their_ids(fields, run_id):
    assert spec.RunSpec(**fields).run_id == run_id
    assert spec.RunSpec(**fields, integrator="gd").run_id == run_id
    assert spec.RunSpec(**fields, w_dtype="float64").run_id == run_id  # W's precision at its default


def test_w_in_float32_is_another_run():
    flowing = spec.RunSpec(integrator="flow")
    assert spec.RunSpec(integrator="flow", w_dtype="float32").run_id != flowing.run_id


def test_only_the_token_models_take_the_flow():
    for name, model in registry.MODELS.items():
        run = dict(model=name, **{k: v["default"] for k, v in model.run_keys.items()})
        if "flow" in model.integrators:
            assert spec.RunSpec(**run, integrator="flow").integrator == "flow"
        else:
            with pytest.raises(ValueError, match="integrator = 'flow': integrator 'flow' does not apply to model"):
                spec.RunSpec(**run, integrator="flow")
    assert sorted(m for m, e in registry.MODELS.items() if "flow" in e.integrators) == [
        "token", "token_p_identity", "token_p_w0"
    ]  # fmt: skip
    with pytest.raises(ValueError, match="flow_tol = 0.1: applies to integrator 'flow' only"):
        spec.RunSpec(flow_tol=0.1)


def test_the_models_own_run_keys_are_fields_of_the_spec():
    for model in registry.MODELS.values():
        assert set(model.run_keys) <= set(spec.MODEL_KEYS), model.name


def _hand_lists(path: Path) -> list[tuple[int, list[str]]]:
    """Literal tuples, lists and sets of six or more run-parameter names in ``path``: a list meant
    to hold every parameter (a table's choice of columns to show, or a formula's inputs, is
    shorter)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            names = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if len([n for n in names if n in PARAMETERS]) >= 6:
                found.append((node.lineno, names))
    return found


SOURCES = sorted(
    p
    for folder in ("benign", "workflow", "tests", "benchmarks")
    for p in (ROOT / folder).rglob("*.py")
    if p.name not in ("spec.py", "test_spec.py")
)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_keeps_a_list_of_run_parameters_by_hand(path):
    assert _hand_lists(path) == []


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({}, None),
        ({"model": "nope"}, "model"),
        ({"model": "encoder", "mlp_dim": 8, "engine": "gram"}, "engine"),
        ({"engine": "gram", "d": 300}, "d"),  # n 20, T 8: the Gram engine needs d >= 324
        ({"model": "encoder"}, "mlp_dim"),  # the encoder needs its MLP width
        ({"mlp_dim": 8}, "mlp_dim"),  # the token model has none
        ({"engine": "auto", "d": 300}, None),
        ({"w_dtype": "float32", "integrator": "flow"}, None),  # the token model trains W
        ({"w_dtype": "float32"}, "w_dtype"),  # gradient descent: float32 not checked there
        ({"model": "token_p_w0", "w_dtype": "float32"}, "w_dtype"),  # W fixed: no correction to store
        ({"model": "encoder", "mlp_dim": 8, "w_dtype": "float32"}, "w_dtype"),
    ],
)
def test_whether_a_run_fits_its_model(change, problem):
    run = {**spec.RunSpec().__dict__, **change}
    found = spec.model_problem(run)
    assert (found and found[0]) == problem, found
