"""Milestones read from hand-built curves, censoring included (benign/analysis/milestones.py)."""

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from benign.analysis.milestones import annotate, milestones, order, run_milestones
from benign.analysis.theory import Criteria
from benign.plan.schema import default

CRITERIA = Criteria(**default("synthetic.regime"))  # the config's default thresholds (its schema)

STEPS = [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]


def curve(noisy, acc, r=None, rate=None, run_id="r"):
    r = [1.0] * 11 if r is None else r
    rate = [0.0] * 11 if rate is None else rate
    return pd.DataFrame({"run_id": run_id, "step": STEPS, "train_acc_noisy": noisy, "train_acc": acc,
                         "test_loss_normalised": r, "test_sel_relevant": rate})  # fmt: skip


def test_flipped_labels_count_as_fitted_from_the_step_they_stay_fitted():
    noisy = [0, 0, 0, 1, 0.25, 0.25, 0.5, 1, 1, 1, 1]  # fitted at 30, lost at 40, fitted for good from 60
    acc = [0.8, 0.8, 0.9, 1, 0.95, 0.95, 1, 1, 1, 1, 1]
    m = run_milestones(curve(noisy, acc), CRITERIA)
    assert m["fit_noisy_step"] == 60 and not m["fit_noisy_censored"]  # half fitted counts (fit_threshold 0.5)
    assert m["fit_all_step"] == 30 and not m["fit_all_censored"]  # first time, not for good
    strict = run_milestones(curve(noisy, acc), dataclasses.replace(CRITERIA, fit_threshold=1.0))
    assert strict["fit_noisy_step"] == 70


def test_milestones_not_reached_are_censored_at_the_horizon():
    noisy = [0, 0, 0, 0, 0, 0, 0, 0, 0.25, 0.25, 0.25]
    m = run_milestones(
        curve(noisy, [0.9] * 11, r=[1.0, 0.9, 0.8, 0.7, 0.6, 0.6, 0.6, 0.55, 0.55, 0.52, 0.51]), CRITERIA
    )
    assert (m["fit_noisy_step"], m["fit_noisy_censored"]) == (100, True)
    assert (m["fit_all_step"], m["fit_all_censored"]) == (100, True)
    assert (m["generalized_step"], m["generalized_censored"]) == (100, True)  # r never at or under 0.5


def test_generalization_is_attention_selecting_from_then_on():
    r = [1.0, 0.9, 0.7, 0.45, 0.55, 0.5, 0.4, 0.3, 0.2, 0.1, 0.1]  # under 0.5 at 30, back over at 40
    m = run_milestones(curve([1] * 11, [1] * 11, r=r), CRITERIA)
    assert m["generalized_step"] == 50 and not m["generalized_censored"]
    loose = run_milestones(curve([1] * 11, [1] * 11, r=r), dataclasses.replace(CRITERIA, loss_threshold=0.8))
    assert loose["generalized_step"] == 20
    # no r (a model without a fixed head): the selection rate decides
    rate = [0, 0, 0.2, 0.4, 0.6, 0.7, 0.8, 0.9, 1, 1, 1]
    by_rate = run_milestones(curve([1] * 11, [1] * 11, r=[np.nan] * 11, rate=rate), CRITERIA)
    assert by_rate["generalized_step"] == 40


def test_a_run_without_flipped_labels_has_no_fit_noisy_milestone():
    m = run_milestones(curve([np.nan] * 11, [1] * 11), CRITERIA)
    assert math.isnan(m["fit_noisy_step"]) and not m["fit_noisy_censored"]


def test_milestones_of_many_runs_are_indexed_by_run():
    a = curve([0] * 5 + [1] * 6, [1] * 11, run_id="a")
    b = curve([0] * 11, [1] * 11, run_id="b").sample(frac=1, random_state=0)  # any row order
    table = milestones(pd.concat([a, b]), CRITERIA)
    assert list(table.index) == ["a", "b"]
    assert table.loc["a", "fit_noisy_step"] == 50 and table.loc["b", "fit_noisy_censored"]


@pytest.mark.parametrize(
    "fit, fit_c, gen, gen_c, words",
    [
        (10, False, 50, False, "selection after fit"),
        (50, False, 10, False, "selection before fit"),
        (30, False, 30, False, "together"),
        (10, False, 100, True, "fit only"),
        (100, True, 10, False, "selection only"),
        (100, True, 100, True, "neither"),
    ],
)
def test_order_of_the_two_times(fit, fit_c, gen, gen_c, words):
    run = pd.Series({"fit_noisy_step": fit, "fit_noisy_censored": fit_c, "generalized_step": gen,
                     "generalized_censored": gen_c})  # fmt: skip
    assert order(run) == words


def test_annotate_fills_the_runs_table_from_the_trainers_curves():
    from benign.core.schema import to_table
    from benign.synthetic.schema import RUNS
    from benign.synthetic.trainer import RunSpec, train_runs

    specs = [RunSpec(d=30, n=10, n_test=20, signal_norm=m, steps=60, log_every=5) for m in (2.0, 8.0)]
    runs, curves, _ = train_runs(specs, device="cpu")
    done = annotate(runs, curves, CRITERIA)
    to_table(done, RUNS)  # conforms to the schema
    for _, row in done.iterrows():
        curve_ = curves[curves.run_id == row.run_id].sort_values("step")
        fitted = curve_[curve_.train_acc >= 1 - 1e-9]
        if len(fitted):
            assert row.fit_all_step == fitted.step.iloc[0] and row.fit_all_censored is False
        else:
            assert row.fit_all_step == 60 and row.fit_all_censored is True
        assert row.generalized_censored in (True, False) and 0 <= row.generalized_step <= 60
