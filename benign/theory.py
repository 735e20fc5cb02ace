"""Theory (docs/regimes.md): SNR, the regime boundaries of Theorem 4.1, g(x) and the regime labels.

Regimes, by signal-to-noise ratio SNR = ||mu|| / (sigma sqrt(d)):
- not overfitting: SNR^2 = omega(1/n), above the curve ||mu|| = c1 sqrt(d / n);
- benign overfitting: between the two curves;
- harmful overfitting: SNR = o(d^{-1/4}), below the curve ||mu|| = c2 d^{1/4}.
The theorem fixes the curves only up to constants, so c1 and c2 are always passed in.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from benign.synthetic import snr

__all__ = [
    "REGIMES",
    "REGIME_LABELS",
    "snr",
    "boundary_not_overfitting",
    "boundary_harmful",
    "g",
    "classify_regime",
    "classify_regimes",
]

REGIMES = ("harmful", "benign", "not_overfitting")
REGIME_LABELS = {
    "harmful": "Harmful overfitting",
    "benign": "Benign overfitting",
    "not_overfitting": "Not overfitting",
}
TOLERANCE = 1e-9  # accuracies are ratios of small integers; absorb float rounding


def boundary_not_overfitting(d, n: int, c1: float):
    """||mu|| = c1 sqrt(d / n): above it the model does not fit the flipped labels."""
    return c1 * np.sqrt(np.asarray(d, dtype=float) / n)


def boundary_harmful(d, c2: float):
    """||mu|| = c2 d^{1/4}: below it overfitting is harmful."""
    return c2 * np.asarray(d, dtype=float) ** 0.25


def g(x, T: int):
    """g(x) = 2x + 2 sinh(x - log T).

    It is the integral over x of 1 / (s (1 - s)) with s = e^x / (e^x + T), the softmax
    weight of a token whose logit exceeds the others' by x: the number of gradient steps
    needed to grow the attention gap to x scales like g(x), exponentially in x.
    """
    x = np.asarray(x, dtype=float)
    return 2 * x + 2 * np.sinh(x - math.log(T))


def classify_regime(
    train_acc_noisy: float,
    test_acc: float,
    fit_threshold: float = 1.0,
    test_threshold: float = 0.9,
) -> str | None:
    """The regime a finished run landed in.

    - "not_overfitting": the flipped training labels are not all fitted
      (train_acc_noisy < fit_threshold, i.e. below 1.0 by default);
    - "benign": all fitted and test_acc >= test_threshold (0.9 by default);
    - "harmful": all fitted and test_acc < test_threshold.
    Both comparisons allow a 1e-9 tolerance. A non-finite input (diverged run, or no
    flipped label to fit) gives None.
    """
    if not (math.isfinite(train_acc_noisy) and math.isfinite(test_acc)):
        return None
    if train_acc_noisy < fit_threshold - TOLERANCE:
        return "not_overfitting"
    return "benign" if test_acc >= test_threshold - TOLERANCE else "harmful"


def classify_regimes(
    train_acc_noisy,
    test_acc,
    fit_threshold: float = 1.0,
    test_threshold: float = 0.9,
):
    """``classify_regime`` elementwise; a Series in gives a Series (same index) out, else an object array."""
    fit = np.asarray(train_acc_noisy, dtype=float)
    test = np.asarray(test_acc, dtype=float)
    fit, test = np.broadcast_arrays(fit, test)
    regimes = np.select(
        [
            ~(np.isfinite(fit) & np.isfinite(test)),
            fit < fit_threshold - TOLERANCE,
            test >= test_threshold - TOLERANCE,
        ],
        [None, "not_overfitting", "benign"],
        default="harmful",
    ).astype(object)
    for series in (train_acc_noisy, test_acc):
        if isinstance(series, pd.Series):
            return pd.Series(regimes, index=series.index, name="regime")
    return regimes


def assign_regimes(runs, fit_threshold: float = 1.0, test_threshold: float = 0.9):
    """Return a copy of a runs table whose ``regime`` column uses these thresholds (None unless status ok)."""
    runs = runs.copy()
    regimes = classify_regimes(runs["train_acc_noisy"], runs["test_acc"], fit_threshold, test_threshold)
    runs["regime"] = regimes.where(runs["status"] == "ok", None)
    return runs


def regimes_at(curves: pd.DataFrame, horizons, fit_threshold: float = 1.0, test_threshold: float = 0.9) -> pd.DataFrame:
    """Each run's regime at each horizon, read from its logged curve: the label of its last
    logged step at or before the horizon (docs/regimes.md#labelling-a-finite-run). Returns
    run_id, horizon, step (the logged step used) and regime; a horizon before a run's first
    logged step is left out."""
    curves = curves.sort_values(["run_id", "step"])
    rows = []
    for horizon in horizons:
        upto = curves[curves["step"] <= horizon]
        last = upto.groupby("run_id", sort=False).tail(1)
        rows.append(
            pd.DataFrame(
                {
                    "run_id": last["run_id"].to_numpy(),
                    "horizon": int(horizon),
                    "step": last["step"].to_numpy(),
                    "regime": classify_regimes(
                        last["train_acc_noisy"], last["test_acc"], fit_threshold, test_threshold
                    ),
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def atlas_labels(runs: pd.DataFrame, curves: pd.DataFrame, sweeps, horizons, fit_threshold: float = 1.0,
                 test_threshold: float = 0.9) -> tuple[pd.DataFrame, pd.DataFrame]:  # fmt: skip
    """The ok runs of the named sweeps and their regimes at each horizon (:func:`regimes_at`):
    what the regime-boundaries table and the regime map both read."""
    runs = runs[runs["setting"].isin(sweeps) & (runs["status"] == "ok")]
    return runs, regimes_at(curves[curves["run_id"].isin(runs["run_id"])], horizons, fit_threshold, test_threshold)
