"""A model is chosen by name, with everything it needs in its registry entry: adding one is its
module, one registry line, the regenerated config schema (python -m benign schema --write) and
one config block. The test adds tests/helpers/dummy_model.py that way and plans, estimates and
trains a job of it; and an entry without a cost function is refused where it is written."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import yaml
from snakemake.utils import update_config

from benign.plan import ConfigError, resources
from benign.plan import schema as config_schema
from benign.plan.load import load
from benign.synthetic import registry, spec
from benign.synthetic.spec import RunSpec
from benign.synthetic.trainer import train_runs
from tests.helpers.dummy_model import cost

# the registry line
DUMMY = registry.Model("dummy", "tests.helpers.dummy_model", "dummy attention model", "dummy_", cost)
# the config block (the smoke config's token block, its settings and seeds)
BLOCK = """
synthetic:
  dummy:
    seeds: [1]
    settings:
      benign: {d: 24, signal_norm: 6.0}
      harmful: {d: 24, signal_norm: 2.0}
      not_overfitting: {d: 24, signal_norm: 12.0}
"""


@pytest.fixture
def with_dummy(monkeypatch):
    monkeypatch.setitem(registry.MODELS, "dummy", DUMMY)


def smoke_config(root, extra: str = "") -> dict:
    cfg = yaml.safe_load((root / "config/config.yaml").read_text())
    update_config(cfg, yaml.safe_load((root / "config/smoke.yaml").read_text()))
    if extra:
        update_config(cfg, yaml.safe_load(extra))
    return cfg


def test_a_registered_model_is_planned_estimated_and_trained(root, with_dummy, tmp_path):
    with pytest.raises(ConfigError, match="the config schema is out of date: .* run python -m benign schema --write"):
        load(smoke_config(root, BLOCK), config_schema.PATH)  # the schema generated before the model's line
    plan = load(smoke_config(root, BLOCK), config_schema.write(tmp_path / "config.schema.yaml"))
    runs = plan.synthetic_jobs["dummy_settings_00"]
    assert {r["model"] for r in runs} == {"dummy"} and {r["setting"] for r in runs} == {
        "benign", "harmful", "not_overfitting"}  # fmt: skip
    costs = [cost(len(b), b[0], "cpu") for b in resources.batches(runs)]  # the module's own estimate
    assert resources.synthetic_job_need(runs) == resources.Need.of(max(m for m, _ in costs), sum(s for _, s in costs))
    specs = [dataclasses.replace(RunSpec(**run), steps=20, n_test=20) for run in runs]
    frames = train_runs(specs, device="cpu")
    table, curves, attention = frames
    assert list(table["model"].unique()) == ["dummy"] and len(table) == 3
    assert np.isfinite(table[["train_loss", "test_loss", "test_sel_relevant"]].to_numpy()).all()
    assert (table["status"] == "ok").all() and len(attention) > 0
    assert table["test_loss_selected"].isna().all()  # no fixed head: no reference losses


def test_the_cost_estimate_is_the_models_own(with_dummy):
    run = dict(model="dummy", n=10, T=4, d=24, n_test=20, steps=100, sigma=1.0, seed=1, mlp_dim=None)
    assert resources.batch_need([run, run]) == cost(2, run, "cpu")


def test_an_entry_without_a_cost_function_is_refused_where_it_is_written():
    with pytest.raises(TypeError, match="cost"):
        registry.Model("nocost", "tests.helpers.dummy_model", "no cost", "nocost_")


def test_every_registered_model_has_a_cost_function_of_its_half():
    """Each cost is a function of benign.synthetic (benign/synthetic/costs.py), not a name of a
    module above it, and answers (bytes, seconds) for a run of its model."""
    run = dict(n=10, T=4, d=64, n_test=20, steps=100, sigma=1.0, seed=1, mlp_dim=32, engine="explicit")
    for name, model in registry.MODELS.items():
        assert model.cost.__module__ == "benign.synthetic.costs", name
        memory, seconds = model.cost(2, {**run, "model": name}, "cpu")
        assert memory > 0 and seconds > 0, name


def test_a_cost_asks_for_a_resolved_engine():
    """costs sits below the registry and the spec (no circle): it takes a run whose ``auto`` engine
    was decided, and refuses one that was not, naming the resolver."""
    run = dict(n=10, T=4, d=4096, n_test=20, steps=100, sigma=1.0, seed=1, mlp_dim=None, model="token")
    with pytest.raises(ValueError, match="resolve_engine"):
        registry.model("token").cost(2, {**run, "engine": "auto"}, "cpu")
    resolved = {**run, "engine": spec.resolve_engine({**run, "engine": "auto"})}
    assert resolved["engine"] == "gram"
    assert registry.model("token").cost(2, resolved, "cpu") == registry.model("token").cost(
        2, {**run, "engine": "gram"}, "cpu"
    )
