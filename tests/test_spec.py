"""The run spec (benign/synthetic/spec.py) is the one list of a synthetic run's parameters: every
other list is built from it, and no module keeps one by hand."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from benign.cli import _parser
from benign.plan import resources, schema
from benign.synthetic import registry, spec
from benign.synthetic.schema import ALIGNMENT, RUNS

ROOT = Path(__file__).resolve().parents[1]
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
    assert own == {"engine", "step_size"} and set(fixed) == (set(spec.SWEEP_AXES) | set(spec.DEFAULT_KEYS) | own) - {
        "steps"
    }


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
        if f.name in ("model", *spec.MODEL_KEYS):  # a run of another model (below)
            continue
        value = getattr(run, f.name)
        if value is None:  # the step size, unset: lr then
            other = 5.0
        elif isinstance(value, tuple):
            other = (*value, "x")
        else:
            other = not value if isinstance(value, bool) else value + "x" if isinstance(value, str) else value + 2
        other = "gram" if f.name == "engine" else other
        changed = dataclasses.replace(run, **{f.name: other})
        assert (changed.run_id != run.run_id) == (f.name in spec.NUMBERS), f.name
    encoder = dataclasses.replace(run, model="encoder", mlp_dim=16)
    assert len({run.run_id, encoder.run_id, dataclasses.replace(encoder, mlp_dim=32).run_id}) == 3


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
