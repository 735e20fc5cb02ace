import math

import numpy as np
import pandas as pd
import pytest

from benign import theory


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
    "fit, test, expected",
    [
        (0.5, 0.99, "not_overfitting"),
        (0.75, 0.2, "not_overfitting"),
        (1.0, 0.9, "benign"),
        (1.0, 0.996, "benign"),
        (1.0 - 1e-12, 0.95, "benign"),  # rounding of 1.0 is still "all fitted"
        (1.0, 0.899, "harmful"),
        (1.0, 0.62, "harmful"),
        (float("nan"), 0.9, None),
        (1.0, float("nan"), None),
    ],
)
def test_classify_regime(fit, test, expected):
    assert theory.classify_regime(fit, test) == expected


def test_classify_regime_thresholds():
    assert theory.classify_regime(0.9, 0.8, fit_threshold=0.9, test_threshold=0.8) == "benign"
    assert theory.classify_regime(0.9, 0.7, fit_threshold=0.9, test_threshold=0.8) == "harmful"
    assert theory.classify_regime(0.85, 0.99, fit_threshold=0.9) == "not_overfitting"


def test_classify_regimes_matches_scalar():
    fit = [0.5, 1.0, 1.0, 1.0 - 1e-12, np.nan, 1.0]
    test = [0.99, 0.9, 0.6, 0.95, 0.9, np.nan]
    out = theory.classify_regimes(fit, test)
    assert list(out) == [theory.classify_regime(f, t) for f, t in zip(fit, test)]
    series = theory.classify_regimes(pd.Series(fit, index=list("abcdef")), pd.Series(test, index=list("abcdef")))
    assert list(series.index) == list("abcdef")
    assert series["c"] == "harmful" and series.isna()["e"]


def test_regimes_at_each_horizon_use_the_last_logged_step_before_it():
    import pandas as pd

    from benign.theory import regimes_at

    curves = pd.DataFrame({"run_id": "r", "step": [0, 10, 100, 1000],
                           "train_acc_noisy": [0.0, 0.5, 1.0, 1.0], "test_acc": [1.0, 1.0, 0.95, 0.8]})  # fmt: skip
    got = regimes_at(curves, [5, 10, 999, 1000, 5000]).set_index("horizon")
    assert list(got["step"]) == [0, 10, 100, 1000, 1000]
    assert list(got["regime"]) == ["not_overfitting", "not_overfitting", "benign", "harmful", "harmful"]
