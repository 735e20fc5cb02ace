"""The time-scale check (benign.analysis.time_scale) on hand-built runs."""

import math

import pandas as pd
import pytest

from benign.analysis.theory import Criteria
from benign.analysis.time_scale import compare, largest_factor, scaled
from benign.config.schema import default
from benign.tables.lr_time import lr_time


def _runs(lr: float, steps: int, fits, rs) -> pd.DataFrame:
    """Runs at norms 1..len(fits): the share of flipped labels fitted and r at the end."""
    return pd.DataFrame(
        {"model": "token", "engine": "explicit", "n": 10, "T": 4, "d": 40, "rho": 0.1, "eta": 0.2, "sigma": 1.0,
         "n_test": 50, "seed": 1, "signal_norm": [float(m + 1) for m in range(len(fits))], "lr": lr, "steps": steps,
         "status": "ok", "train_acc_noisy": fits, "test_loss_normalised": rs, "test_sel_relevant": math.nan}
    )  # fmt: skip


def test_scaled_run_keeps_lr_t():
    run = {"lr": 0.005, "steps": 10_000, "setting": "atlas", "d": 900}
    fast = scaled(run, 5)
    assert fast["lr"] * fast["steps"] == pytest.approx(run["lr"] * run["steps"]) and fast["setting"] == "atlas_lr5"
    with pytest.raises(ValueError, match="not a multiple"):
        scaled(run, 3)


def test_labels_and_r_are_compared_run_by_run(tmp_path):
    # base: harmful (fits, r 0.9), benign (fits, r 0.1), not overfitting (no fit), benign (r 0.4)
    base = _runs(0.01, 100, [1.0, 1.0, 0.0, 1.0], [0.9, 0.1, 0.2, 0.4])
    same = _runs(0.02, 50, [1.0, 1.0, 0.0, 1.0], [0.85, 0.12, 0.2, 0.45])  # every label kept, |dr| <= 0.05
    moved = _runs(0.1, 10, [1.0, 1.0, 0.0, 1.0], [0.9, 0.1, 0.2, 0.6])  # the last run turns harmful
    table = compare(base, {2: same, 10: moved}, Criteria(**default("synthetic.regime")))
    assert table["runs"].tolist() == [4, 4] and table["lr t"].tolist() == [1.0, 1.0]
    assert table["labels_agree"].tolist() == [1.0, 0.75]
    assert table["max_abs_delta_r"].tolist() == pytest.approx([0.05, 0.2])
    assert table["qualifies"].tolist() == [True, False] and largest_factor(table) == 2
    assert largest_factor(table.assign(qualifies=False)) is None
    lr_time(table, tmp_path / "lr_time", "atlas", 0.01, 100)
    text = (tmp_path / "lr_time.md").read_text()
    assert "k = 2" in text and "| 10 | 4 |" in text and "75.0%" in text
