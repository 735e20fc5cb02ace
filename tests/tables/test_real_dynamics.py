"""The real-data dynamics table (benign.tables.real_dynamics), worked by hand."""

import pandas as pd
import pytest

from benign.tables.real_dynamics import real_dynamics
from tests.helpers import frames


def test_real_dynamics_table_by_hand(tmp_path):
    """tests/helpers/frames.real_dynamics_case: the means, the censored seed counted, the fall split
    at the memorising epoch, a run that memorises before its peak, a cell with no ok run."""
    runs, curves = frames.real_dynamics_case()
    grid = {"n": [200], "eta": [0.0, 0.05, 0.1, 0.2], "seeds": [1, 2]}
    table = real_dynamics(runs, curves, tmp_path / "real_dynamics", grid=grid).set_index("eta")
    noisy = table.loc[0.2]
    assert noisy["seeds"] == 2 and noisy["peak_test_acc_mean"] == pytest.approx(0.85)
    assert noisy["test_acc_mean"] == pytest.approx(0.65) and noisy["acc_lost_mean"] == pytest.approx(0.2)
    assert (noisy["fitted"], noisy["censored"]) == (1, 1) and noisy["fit_epoch_min"] == 10
    # seed 1: 0.8 at the peak (epoch 3), 0.7 when memorised (epoch 10), 0.6 at the end
    assert noisy["fall_before_fit_mean"] == pytest.approx(0.1) and noisy["fall_after_fit_mean"] == pytest.approx(0.1)
    assert (noisy["peak_epoch_min"], noisy["peak_epoch_max"]) == (1, 3)
    early = table.loc[0.1]  # memorised at epoch 1, peak 0.85 at epoch 3: the whole fall counts as after
    assert (early["seeds"], early["failed"], early["fit_epoch_min"]) == (1, 1, 1)
    assert early["fall_before_fit_mean"] == 0.0 and early["fall_after_fit_mean"] == pytest.approx(0.1)
    assert table.loc[0.05, "seeds"] == 0
    md = (tmp_path / "real_dynamics.md").read_text()
    assert "| 10 (1 of 2 censored) |" in md and "no noisy rows" in md and "85.0 ± 5.0" in md
    assert "| 0.05 | 0 (1 failed) |" in md  # the failed cell is shown, its numbers as missing
    assert pd.read_csv(tmp_path / "real_dynamics.csv").shape[0] == 4
