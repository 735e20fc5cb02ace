"""The predictor's check table (benign.tables.predictor_check): the bias, its power and its words
(tests/analysis/test_predictor_power.py)."""

import numpy as np
import pandas as pd
import pytest

from benign.analysis import predictor_check as check
from benign.tables import predictor_check as table
from tests.analysis.test_predictor import model_table
from tests.analysis.test_predictor_check import CELLS, simulated_check


def test_the_table_prints_the_bias_its_power_and_its_words(tmp_path, monkeypatch):
    """A simulated check of the hand-made model (6 cells, 3 seeds, sigma 0.2), shifted by 0.9 in
    ln ||mu||*: the table keeps its coverage columns and reads "biased beyond 0.1", with the power beside."""
    model = model_table(sigma=0.2, var_c=0.01)
    runs, labels = simulated_check(np.random.default_rng(3), model, 0.9)
    cells = check.cell_coverage(check.seed_brackets(runs, labels, model))
    coverage = check.coverage(cells)
    monkeypatch.setattr(check, "sweep_coverage", lambda *args: (runs, cells, coverage))
    out = table.predictor_check(runs, pd.DataFrame(), model, "atlas_check", {}, tmp_path / "predictor_check")
    row = out[(out["horizon"] == 10000) & (out["boundary"] == "not overfitting")].iloc[0]
    assert row["cells"] == len(CELLS) and row["verdict"] == "below 95%"
    # 0.9 plus one shared miss of the law's constant, sd 0.1
    assert row["bias_verdict"] == "biased beyond 0.1" and row["bias_ln"] == pytest.approx(0.9, abs=0.35)
    assert 0.0 <= row["power"] <= 1.0
    assert 0.0 <= row["calibration_power"] <= 1.0
    assert row["spread_verdict"] == check.spread_verdict(
        row["spread_z_low"], row["spread_z_high"], row["calibration_power"]
    )
    text = (tmp_path / "predictor_check.md").read_text()
    assert "Power against a bias of 0.1" in text and "biased" in text
    assert "Power against a true sd 2 x the predicted" in text and "| Spread |" in text
    assert "against a predicted sd too small by a factor of 2" in text and "calibrated within" not in text
