"""The attention gap Lambda and the theory's clock g (benign/synthetic/selection.py, clock.py) against
direct computations on hand-built logits, and the clock's statistics (benign/analysis/gap_growth.py)
on hand-built curves."""

import math

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.integrate import quad

from benign.analysis import gap_growth
from benign.synthetic import selection
from benign.synthetic.clock import g


def test_lambda_is_the_relevant_logit_less_the_log_sum_exp_of_the_others():
    logits = torch.tensor(
        [[[2.0, 0.5, -1.0, 0.0], [-0.3, 1.2, 0.4, 0.9], [5.0, -2.0, -2.0, -2.0]]], dtype=torch.float64
    )
    att = torch.softmax(logits, dim=-1)
    direct = logits[..., 0] - torch.logsumexp(logits[..., 1:], dim=-1)
    assert selection.attention_gap(att, 4).numpy() == pytest.approx(direct.numpy(), rel=1e-12)


def test_a_saturated_row_gives_a_finite_gap():
    att = torch.tensor([[[1.0, 0.0, 0.0, 0.0]]], dtype=torch.float64)
    gap = float(selection.attention_gap(att, 4))
    assert np.isfinite(gap) and gap > 30


@pytest.mark.parametrize("T", [4, 8])
def test_g_is_the_integral_of_one_over_s_one_minus_s(T):
    """g(x) - g(x0) = integral from x0 to x of dx / (s (1 - s)), s = e^x / (e^x + T)."""
    for x0, x in ((-1.0, 0.5), (0.0, 3.0), (1.0, 6.0)):
        integral, _ = quad(lambda u: (math.exp(u) + T) ** 2 / (T * math.exp(u)), x0, x)
        assert float(g(x, T) - g(x0, T)) == pytest.approx(integral, rel=1e-9)


def test_gap_growth_averages_g_over_the_masked_samples():
    logits = torch.tensor([[[2.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.5, 0.0]]], dtype=torch.float64)
    att = torch.softmax(logits, dim=-1)
    lam = (logits[..., 0] - torch.logsumexp(logits[..., 1:], dim=-1)).numpy()[0]
    out = selection.gap_growth(att, 4, torch.tensor([[True, False]]))
    assert out["lambda"][0] == pytest.approx(lam[0]) and out["g"][0] == pytest.approx(float(g(lam[0] + math.log(4), 4)))


def test_the_clock_statistics_of_a_linear_g_and_a_one_over_t_loss():
    steps = np.unique(np.round(np.geomspace(1, 10_000, 41))).astype(float)
    curve = pd.DataFrame({"step": np.r_[0.0, steps], "train_clean_g": 3.0 + 0.5 * np.r_[0.0, steps],
                          "train_clean_lambda": 2.0, "test_g": 1.0 + 2.0 * np.r_[0.0, steps] ** 0.5,
                          "test_lambda": 1.0, "test_loss_normalised": np.r_[1.0, 1.0 / steps]})  # fmt: skip
    out = gap_growth.run_growth(curve, 10_000)
    assert out["g_slope"] == pytest.approx(0.5) and out["g_r2"] == pytest.approx(1.0)
    assert out["g_exponent"] == pytest.approx(1.0, abs=1e-9) and out["r_slope"] == pytest.approx(-1.0, abs=1e-9)
    assert out["g_test_exponent"] == pytest.approx(0.5, abs=1e-9)  # the test samples' g grows like sqrt(steps)
    saturated = gap_growth.run_growth(curve.assign(train_clean_lambda=35.0), 10_000)
    assert saturated["saturated"] and np.isnan(saturated["g_slope"])


def test_the_mean_exponent_counts_lines_not_runs():
    """Ten runs on each of four (d, n) lines: the runs are averaged per line, and the interval is
    Student's t on the lines' spread (3 degrees of freedom), whatever the runs' count."""
    lines = np.array([0.8, 0.9, 1.1, 1.2])
    growth = pd.DataFrame({"horizon": 1000, "d": np.repeat([1e3, 1e4, 1e5, 1e6], 10), "n": 10, "seed": 1,
                           "g_exponent": np.repeat(lines, 10) + np.tile(np.linspace(-0.01, 0.01, 10), 4)})  # fmt: skip
    row = gap_growth.mean_exponent(growth, "g_exponent").iloc[0]
    from scipy.stats import t

    assert row["mean"] == pytest.approx(1.0) and row["lines"] == 4 and row["runs"] == 40
    half = t.ppf(0.975, 3) * lines.std(ddof=1) / 2
    assert (row["high"] - row["low"]) / 2 == pytest.approx(half, rel=1e-9)


@pytest.mark.parametrize("power", [0.7, 1.5])
def test_a_high_r2_cannot_tell_the_clocks_apart_but_the_local_exponent_can(power, capsys):
    """On the atlas's log-spaced schedule (41 logged steps to 10^4) g ~ steps^0.7 and steps^1.5 are
    both fitted by a straight line with a high R^2 (docs/regimes.md#dynamics quotes the
    values printed here); the local exponent over the last decade reads the power itself."""
    steps = np.unique(np.round(np.geomspace(1, 10_000, 41))).astype(float)
    g_values = np.r_[0.0, steps] ** power
    curve = pd.DataFrame({"step": np.r_[0.0, steps], "train_clean_g": g_values, "train_clean_lambda": 2.0,
                          "test_g": g_values, "test_lambda": 1.0, "test_loss_normalised": 0.5})  # fmt: skip
    out = gap_growth.run_growth(curve, 10_000)
    with capsys.disabled():
        print(f"\n[gap clock] g ~ steps^{power}: R^2 of the straight line {out['g_r2']:.3f}, "
              f"local exponent {out['g_exponent']:.3f}")  # fmt: skip
    assert out["g_r2"] > 0.95
    assert out["g_exponent"] == pytest.approx(power, abs=0.02)
