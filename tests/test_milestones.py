"""Milestones read from hand-built curves, censoring included (benign/milestones.py)."""

import math

import numpy as np
import pandas as pd

from benign.milestones import Criteria, milestones, run_milestones

STEPS = [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]


def curve(noisy, acc, test_loss, test_acc, run_id="r"):
    return pd.DataFrame({"run_id": run_id, "step": STEPS, "train_acc_noisy": noisy, "train_acc": acc,
                         "test_loss": test_loss, "test_acc": test_acc})  # fmt: skip


def test_flipped_labels_count_as_fitted_from_the_step_they_stay_fitted():
    noisy = [0, 0, 0, 1, 0.5, 0.5, 1, 1, 1, 1, 1]  # fitted at 30, lost at 40, fitted for good from 60
    acc = [0.8, 0.8, 0.9, 1, 0.95, 0.95, 1, 1, 1, 1, 1]
    m = run_milestones(curve(noisy, acc, [0.5] * 11, [1.0] * 11), floor=None)
    assert m["fit_noisy_step"] == 60 and not m["fit_noisy_censored"]
    assert m["fit_all_step"] == 30 and not m["fit_all_censored"]  # first time, not for good


def test_milestones_not_reached_are_censored_at_the_horizon():
    noisy = [0, 0, 0, 0, 0, 0, 0, 0, 0.5, 0.5, 0.75]
    m = run_milestones(curve(noisy, [0.9] * 11, [0.6] * 11, [1.0] * 11), floor=0.401)
    assert (m["fit_noisy_step"], m["fit_noisy_censored"]) == (100, True)
    assert (m["fit_all_step"], m["fit_all_censored"]) == (100, True)
    assert (m["generalized_step"], m["generalized_censored"]) == (100, True)  # 0.6 never near the floor


def test_generalization_needs_the_loss_near_its_target_and_the_accuracy_where_it_moves():
    loss = [0.7, 0.6, 0.55, 0.5, 0.45, 0.43, 0.42, 0.41, 0.405, 0.404, 0.403]
    flat = run_milestones(curve([1] * 11, [1] * 11, loss, [1.0] * 11), floor=0.401)
    assert flat["generalized_step"] == 70 and not flat["generalized_censored"]  # 0.41 - 0.401 <= 0.01
    rising = [0.5, 0.5, 0.5, 0.6, 0.7, 0.8, 0.85, 0.88, 0.89, 0.95, 0.97]  # moves: must pass 0.9 too
    late = run_milestones(curve([1] * 11, [1] * 11, loss, rising), floor=0.401)
    assert late["generalized_step"] == 90
    no_floor = run_milestones(
        curve([1] * 11, [1] * 11, loss, [1.0] * 11), floor=None, criteria=Criteria(loss_eps=0.003)
    )
    assert no_floor["generalized_step"] == 80  # within 0.003 of its value at the horizon, 0.403
    strict = run_milestones(curve([1] * 11, [1] * 11, loss, [1.0] * 11), floor=0.401, criteria=Criteria(loss_eps=1e-3))
    assert (strict["generalized_step"], strict["generalized_censored"]) == (100, True)


def test_a_run_without_flipped_labels_has_no_fit_noisy_milestone():
    m = run_milestones(curve([np.nan] * 11, [1] * 11, [0.5] * 11, [1.0] * 11), floor=None)
    assert math.isnan(m["fit_noisy_step"]) and not m["fit_noisy_censored"]


def test_milestones_of_many_runs_are_indexed_by_run():
    a = curve([0] * 5 + [1] * 6, [1] * 11, [0.5] * 11, [1.0] * 11, run_id="a")
    b = curve([0] * 11, [1] * 11, [0.5] * 11, [1.0] * 11, run_id="b").sample(frac=1, random_state=0)  # any row order
    table = milestones(pd.concat([a, b]), {"a": None, "b": None})
    assert list(table.index) == ["a", "b"]
    assert table.loc["a", "fit_noisy_step"] == 50 and table.loc["b", "fit_noisy_censored"]


def test_annotate_fills_the_runs_table_from_the_trainers_curves():
    from benign.schema import RUNS, to_table
    from benign.trainer import RunSpec, train_runs

    specs = [RunSpec(d=30, n=10, n_test=20, signal_norm=m, steps=60, log_every=5) for m in (2.0, 8.0)]
    runs, curves, _ = train_runs(specs, device="cpu")
    from benign.milestones import annotate

    done = annotate(runs, curves)
    to_table(done, RUNS)  # conforms to the schema
    for _, row in done.iterrows():
        curve = curves[curves.run_id == row.run_id].sort_values("step")
        fitted = curve[curve.train_acc >= 1 - 1e-9]
        if len(fitted):
            assert row.fit_all_step == fitted.step.iloc[0] and row.fit_all_censored is False
        else:
            assert row.fit_all_step == 60 and row.fit_all_censored is True
        assert row.generalized_censored in (True, False) and 0 <= row.generalized_step <= 60
