import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from benign.analysis import theory
from benign.plan.schema import default

CRITERIA = theory.Criteria(**default("synthetic.regime"))  # the config's default thresholds (its schema)


def test_snr_hand_value():
    assert theory.snr(20.0, 1.0, 400) == pytest.approx(1.0)
    assert theory.snr(5.0, 2.0, 100) == pytest.approx(0.25)


def test_boundaries_hand_values():
    # c1 sqrt(d/n): d = 2000, n = 20 -> 3 * 10; c2 d^(1/4): d = 10000 -> 2 * 10
    assert theory.boundary_not_overfitting(2000, 20, 3.0) == pytest.approx(30.0)
    assert theory.boundary_harmful(10000, 2.0) == pytest.approx(20.0)
    np.testing.assert_allclose(theory.boundary_harmful([1, 16, 81], 1.0), [1.0, 2.0, 3.0])
    np.testing.assert_allclose(theory.boundary_not_overfitting(np.array([20, 80]), 20, 1.0), [1.0, 2.0])


def test_g_hand_values():
    # g(log T) = 2 log T (sinh 0 = 0); g(0) = 2 sinh(-log 8) = 1/8 - 8
    assert theory.g(math.log(8), 8) == pytest.approx(2 * math.log(8))
    assert theory.g(0.0, 8) == pytest.approx(-7.875)


def test_g_is_integral_of_inverse_softmax_variance():
    T, x, h = 8, np.linspace(-2.0, 6.0, 17), 1e-5
    derivative = (theory.g(x + h, T) - theory.g(x - h, T)) / (2 * h)
    s = np.exp(x) / (np.exp(x) + T)
    np.testing.assert_allclose(derivative, 1 / (s * (1 - s)), rtol=1e-6)


@pytest.mark.parametrize(
    "fit, r, rate, expected",
    [
        (0.25, 0.1, 1.0, "not_overfitting"),  # under half the flipped labels fitted
        (0.5, 0.9, 0.0, "harmful"),  # half fitted is overfitting; r near 1: attention stays uniform
        (1.0, 0.5, 0.0, "benign"),  # r at the threshold selects
        (1.0, 0.5 + 1e-12, 0.0, "benign"),  # rounding of the threshold still selects
        (1.0, 0.51, 1.0, "harmful"),  # r decides where it is defined, whatever the argmax says
        (1.0, float("nan"), 0.6, "benign"),  # no fixed head (encoder): the selection rate decides
        (1.0, float("nan"), 0.4, "harmful"),
        (float("nan"), 0.1, 1.0, None),  # no flipped label to fit
        (1.0, float("nan"), float("nan"), None),  # no selection measured
    ],
)
def test_classify_regimes_from_selection(fit, r, rate, expected):
    assert theory.classify_regimes(fit, r, rate, CRITERIA).item() == expected


def test_thresholds_move_the_labels():
    strict = dataclasses.replace(CRITERIA, fit_threshold=1.0, loss_threshold=0.2)
    assert theory.classify_regimes(0.75, 0.1, 1.0, strict).item() == "not_overfitting"
    assert theory.classify_regimes(1.0, 0.3, 1.0, strict).item() == "harmful"
    assert theory.classify_regimes(1.0, 0.1, 0.0, strict).item() == "benign"


def test_head_accuracy_label_is_the_old_accuracy_rule():
    assert list(theory.head_acc_regimes([1.0, 1.0, 0.25], [0.95, 0.6, 0.99], CRITERIA)) == [
        "benign",
        "harmful",
        "not_overfitting",
    ]


def test_series_in_series_out():
    idx = list("abc")
    out = theory.classify_regimes(pd.Series([1.0, 1.0, np.nan], idx), pd.Series([0.1, 0.9, 0.1], idx), np.nan, CRITERIA)
    assert list(out.index) == idx and out["a"] == "benign" and out["b"] == "harmful" and out.isna()["c"]


def test_uniform_attention_accuracy_cannot_see_d():
    """The fixed head under uniform attention (step 0) classifies the mean token: its accuracy is
    Phi(||mu|| / (sigma sqrt(2T))) whatever d (docs/regimes.md#why-accuracy-cannot-see-d)."""
    from scipy.stats import norm

    from benign.synthetic.trainer import RunSpec, train_runs

    for d in (200, 3200):
        runs, _, _ = train_runs([RunSpec(d=d, n=10, T=8, signal_norm=4.0, n_test=4000, steps=1)], device="cpu")
        assert runs["test_acc_uniform"].iloc[0] == pytest.approx(norm.cdf(4.0 / np.sqrt(16)), abs=0.02)


def test_regimes_at_each_horizon_use_the_last_logged_step_before_it():
    from benign.analysis.theory import regimes_at

    curves = pd.DataFrame({"run_id": "r", "step": [0, 10, 100, 1000],
                           "train_acc_noisy": [0.0, 0.5, 1.0, 1.0], "test_loss_normalised": [1.0, 0.9, 0.4, 0.6],
                           "test_sel_relevant": [0.0, 0.2, 1.0, 1.0], "test_err_hardmax": [0.5, 0.3, 0.0, 0.25]})  # fmt: skip
    got = regimes_at(curves, [5, 10, 999, 1000, 5000], CRITERIA).set_index("horizon")
    assert list(got["step"]) == [0, 10, 100, 1000]  # 5000: past the run's last logged step, left out
    assert list(got["regime"]) == ["not_overfitting", "harmful", "benign", "harmful"]
    assert list(got["overfits"]) == [False, True, True, True] and list(got["selects"]) == [False, False, True, False]
    assert list(got["selects_hardmax"]) == [False, False, True, True]  # error at most 0.25
