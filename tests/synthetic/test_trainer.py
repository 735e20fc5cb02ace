"""The trainer's records: schema, log schedule, clean/noisy accuracy, divergence."""

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from benign.core.schema import to_table
from benign.plan import ConfigError
from benign.plan.validate import check_run
from benign.synthetic import data_model as synthetic
from benign.synthetic.models.token_selection import init_W
from benign.synthetic.schema import ATTENTION, CURVES, RUNS
from benign.synthetic.trainer import RunSpec, log_steps, train_runs
from tests.helpers.reference_models import token_model_dense

SMALL = dict(n=10, T=4, d=30, n_test=20, steps=40, lr=0.05, seed=3)


def test_log_steps():
    assert log_steps(100, every=25) == [0, 25, 50, 75, 100]
    assert log_steps(100) == [0, 100]
    pts = log_steps(10000, points=5)
    assert pts[0] == 0 and pts[-1] == 10000 and pts == sorted(set(pts)) and pts[2] == 10


def test_frames_conform_and_match_reference():
    specs = [
        RunSpec(**SMALL, signal_norm=m, log_every=10, record_attention=(m == 5.0), setting="x") for m in (5.0, 7.0)
    ]
    runs, curves, attention = train_runs(specs, device="cpu")
    for df, schema in ((runs, RUNS), (curves, CURVES), (attention, ATTENTION)):
        to_table(df, schema)  # raises if a column is missing or mistyped
    history, _, _ = token_model_dense(
        synthetic.generate(
            synthetic.DataSpec(**{k: SMALL[k] for k in ("n", "T", "d", "n_test", "seed")}, signal_norm=5.0)
        ),
        init_W(30, 3),
        0.05,
        40,
    )
    row = runs[runs.signal_norm == 5.0].iloc[0]
    assert math.isclose(row.train_loss, history[-1][0], rel_tol=1e-9)
    assert math.isclose(row.test_loss, history[-1][1], rel_tol=1e-9)
    assert sorted(curves[curves.run_id == row.run_id].step) == [0, 10, 20, 30, 40]
    # every logged step, not only the last: the recorded outputs are those before that step's update
    logged = curves[curves.run_id == row.run_id].set_index("step")
    for k in (0, 10, 20, 30, 40):
        assert math.isclose(logged.loc[k, "train_loss"], history[k][0], rel_tol=1e-9), k
        assert math.isclose(logged.loc[k, "test_loss"], history[k][1], rel_tol=1e-9), k
    for k in (10, 40):
        att = attention[attention.step == k].sort_values(["sample", "token"]).probability.to_numpy()
        assert np.allclose(att, history[k][2].flatten().numpy(), rtol=1e-9, atol=1e-12), k
    assert set(attention.run_id) == {row.run_id}  # only the run that asked for it
    sums = attention.groupby(["step", "sample"]).probability.sum()
    assert np.allclose(sums, 1.0)
    assert row.status == "ok" and row.regime is None  # the config's thresholds label runs when they are gathered


def test_clean_and_noisy_accuracy_split():
    spec = RunSpec(**SMALL, signal_norm=5.0, eta=0.2)
    runs, _, _ = train_runs([spec], device="cpu")
    row = runs.iloc[0]
    n_noisy = row.n_noisy
    assert n_noisy == 2
    expected = (1 - 0.2) * row.train_acc_clean + 0.2 * row.train_acc_noisy
    assert math.isclose(row.train_acc, expected)


def test_diverging_run_is_marked_and_others_go_on():
    enc = {**SMALL, "steps": 30, "model": "encoder", "mlp_dim": 8, "d": 8}
    specs = [RunSpec(**{**enc, "lr": 1e30}, signal_norm=5.0), RunSpec(**enc, signal_norm=6.0)]
    runs, _, _ = train_runs(specs, device="cpu")
    bad, good = runs.iloc[0], runs.iloc[1]
    assert bad.status == "diverged" and math.isnan(bad.train_loss) and pd.isna(bad.regime)
    assert good.status == "ok" and math.isfinite(good.train_loss)


def test_same_seed_same_numbers():
    spec = RunSpec(**{**SMALL, "model": "encoder", "mlp_dim": 8, "d": 8}, signal_norm=5.0)
    a, _, _ = train_runs([spec], device="cpu")
    b, _, _ = train_runs([spec], device="cpu")
    cols = ["train_loss", "test_loss", "train_acc", "test_acc"]
    assert a[cols].equals(b[cols])


@pytest.mark.parametrize("bad", [{"model": "mlp"}, {"model": "encoder"}, {"model": "token", "mlp_dim": 8}])
def test_runspec_refuses_runs_its_model_cannot_take(bad):
    with pytest.raises(ValueError):
        RunSpec(**bad)


@pytest.mark.parametrize(
    "bad", [{"lr": 0.0}, {"steps": 0}, {"T": 2}, {"model": "mlp"}, {"mlp_dim": 0, "model": "encoder"}]
)
def test_run_values_are_refused_by_the_validation_layer(bad):
    run = {**dataclasses.asdict(RunSpec()), **bad}
    with pytest.raises(ConfigError, match=next(iter(bad))):
        check_run(run, "run")


def test_attention_rows_record_whether_each_sample_is_fitted():
    """The attention table's ``fitted`` is the model's prediction of the label trained on, per
    logged step and sample: at every step its share equals the curves' training accuracy."""
    runs, curves, attention = train_runs(
        [RunSpec(d=40, n=10, T=4, n_test=20, signal_norm=3.0, steps=30, log_every=10, record_attention=True)],
        device="cpu",
    )
    per_step = attention.groupby(["step", "sample"])["fitted"].first().groupby("step").mean()
    accuracy = curves.set_index("step")["train_acc"]
    assert list(per_step.index) == list(accuracy.index)
    assert (per_step - accuracy).abs().max() < 1e-12
