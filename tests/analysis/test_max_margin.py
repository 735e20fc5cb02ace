"""The attention-SVM check's numbers (benign/analysis/max_margin.py) on hand-built logs: the rate
fits recover a known exponent and tell the two laws apart; the horizon rows read the last logged
step at or before each horizon and the step after which no seed's selection changed."""

import numpy as np
import pandas as pd
import pytest

from benign.analysis.max_margin import RATE_FROM, horizon_rows, rate_fits

COLUMNS = ["cosine_random", "cosine_early", "cosine_relevant", "locally_optimal", "margin_ratio", "train_loss",
           "clean_signal", "noisy_signal", "noisy_opposite", "noisy_noise", "noisy_agrees", "min_margin_clean",
           "min_margin_noisy", "test_err_hardmax", "test_err_svm", "test_svm_agreement"]  # fmt: skip


def log(steps, gap, seeds=(1, 2), changed_at=()):
    rows = []
    for seed in seeds:
        for step, g in zip(steps, gap):
            rows.append({"model": "token_p_w0", "setting": "benign", "seed": seed, "step": int(step), "d": 500,
                         "signal_norm": 20.0, "cosine": 1 - g, "selection_changed": (seed, step) in changed_at,
                         **dict.fromkeys(COLUMNS, 0.5)})  # fmt: skip
    return pd.DataFrame(rows)


@pytest.mark.parametrize("law, exponent", [("log", 2.0), ("power", 0.3)])
def test_the_rate_fit_recovers_the_exponent_of_its_law_and_fits_it_better(law, exponent):
    steps = np.unique(np.logspace(1, 5, 60).astype(int))
    t = steps.astype(float)
    gap = 0.5 * (np.log(t) ** -exponent if law == "log" else t**-exponent)
    rates = rate_fits(log(steps, gap)).iloc[0]
    other = "power" if law == "log" else "log"
    assert rates[f"{law}_exponent"] == pytest.approx(exponent, abs=1e-9)
    assert rates[f"{law}_rms"] < 1e-9 < rates[f"{other}_rms"]
    assert rates["decades"] == pytest.approx(np.log10(steps.max() / steps[steps >= RATE_FROM].min()))


def test_horizon_rows_read_the_last_step_before_each_horizon_and_when_selection_settled():
    steps = [1, 10, 100, 1000]
    frame = log(steps, [0.5, 0.2, 0.1, 0.05], changed_at={(1, 10), (2, 100)})
    rows = horizon_rows(frame, [50, 1000]).set_index("horizon")
    assert rows.loc[50, "step"] == 10 and rows.loc[50, "cosine"] == pytest.approx(0.8)
    assert rows.loc[1000, "step"] == 1000 and rows.loc[1000, "cosine"] == pytest.approx(0.95)
    assert rows.loc[50, "selection_stable_since"] == 10 and rows.loc[1000, "selection_stable_since"] == 100
    assert rows.loc[1000, "seeds"] == 2
