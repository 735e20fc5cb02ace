"""The per-run measures the tables and figures share (benign/analysis/metrics.py), against
hand-worked cases."""

import numpy as np
import pandas as pd
import pytest

from benign.analysis import metrics
from tests.helpers.frames import heatmap_runs


def test_cell_grid_masks_diverged_and_nan():
    runs = heatmap_runs()
    grid = metrics.cell_grid(runs, "d", "signal_norm", "train_loss")
    assert list(grid.x) == [250, 375, 500, 625] and list(grid.y) == [5.0, 7.5, 10.0]
    assert grid.diverged[0, 0] and grid.diverged.sum() == 1 and grid.values.mask[0, 0]
    assert np.isfinite(grid.values.compressed()).all() and grid.values.count() == 11
    assert grid.values[1, 2] == pytest.approx(0.4 + 500 / 1e4 + 0.015)  # mean over seeds 1, 2
    assert (grid.runs == 2).all()
    test = metrics.cell_grid(runs, "d", "signal_norm", "test_loss")
    row7 = runs.iloc[7]
    i, j = list(test.y).index(row7["signal_norm"]), list(test.x).index(row7["d"])
    assert test.diverged[i, j] and test.values.mask[i, j] and test.diverged.sum() == 2


def test_delayed_milestones_hand_worked():
    # two runs; mean train accuracy reaches 1 at step 10 (0.9/1.0 at step 5 do not)
    rows = []
    for run, (acc5, loss10) in {"a": (0.9, 0.50), "b": (1.0, 0.46)}.items():
        rows += [
            dict(run_id=run, step=1, train_acc=0.5, test_acc=0.98, test_loss=0.69, train_loss=0.69),
            dict(run_id=run, step=5, train_acc=acc5, test_acc=0.99, test_loss=0.60, train_loss=0.6),
            dict(run_id=run, step=10, train_acc=1.0, test_acc=1.0, test_loss=loss10, train_loss=0.5),
            dict(run_id=run, step=100, train_acc=1.0, test_acc=1.0, test_loss=0.42, train_loss=0.41),
        ]
    m = metrics.delayed_milestones(pd.DataFrame(rows))
    assert m["fit_step"] == 10 and m["first_step"] == 1 and m["last_step"] == 100
    assert m["test_loss_fit"] == pytest.approx(0.48) and m["test_loss_last"] == pytest.approx(0.42)
    assert m["test_acc_first"] == pytest.approx(0.98)
    never = pd.DataFrame(rows).assign(train_acc=0.9)
    assert metrics.delayed_milestones(never)["fit_step"] is None


def test_token_loss_floor_is_the_spec_value():
    assert metrics.TOKEN_LOSS_FLOOR == pytest.approx(0.401, abs=5e-4)
