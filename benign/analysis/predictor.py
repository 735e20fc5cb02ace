"""The regime predictor: P(regime) at (d, n, ||mu||, steps) from the fitted regime model
(results/tables/regime_model.csv, benign.tables.boundaries.regime_model).

Each boundary gives P(side) = sigmoid(k (log ||mu|| - log ||mu||*(d, n))), ||mu||* = c d^a n^b.
The regimes combine the two sides, read as independent: not overfitting with P_no, benign with
(1 - P_no) P_sel, harmful with (1 - P_no) (1 - P_sel). The interval of each probability spans
the boundaries' ||mu||* over their 95% intervals, whose widths (in log ||mu||) are those of the
nearest fitted (d, n) line. Outside the fitted range of d and n, or at a horizon that was not
fitted, the model does not answer.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

NOT_OVERFITTING, SELECTION = "not overfitting", "selection (harmful below)"


class OutsideModel(ValueError):
    """A question the fitted model cannot answer; the message names the value and the range."""


def _boundary(model: pd.DataFrame, d: float, n: float) -> tuple[float, float, float, float]:
    """(||mu||*, its low and high ends, k) of one boundary's rows at (d, n)."""
    first = model.iloc[0]
    star = first["c"] * d ** _or0(first["a"]) * n ** _or0(first["b"])
    lines = model.assign(dist=(np.log(model["d"] / d)) ** 2 + (np.log(model["n"] / n)) ** 2)
    near = lines.sort_values("dist").iloc[0]
    low = star * near["mu_star_low"] / near["mu_star"] if np.isfinite(near["mu_star_low"]) else 0.0
    high = star * near["mu_star_high"] / near["mu_star"] if np.isfinite(near["mu_star_high"]) else np.inf
    return star, low, high, float(first["k"])


def _or0(value) -> float:
    return float(value) if np.isfinite(value) else 0.0


def _side(signal_norm: float, star: float, k: float) -> float:
    if star == 0.0:
        return 1.0
    if not np.isfinite(star):
        return 0.0
    return float(1.0 / (1.0 + np.exp(-k * (np.log(signal_norm) - np.log(star)))))


def predict(model: pd.DataFrame, d: float, n: float, signal_norm: float, steps: int | None = None) -> dict:
    """{"horizon": h, "regimes": {regime: (p, low, high)}, "boundaries": {name: (||mu||*, low,
    high)}} at (d, n, ||mu||) after ``steps`` (default: the longest fitted horizon). Raises
    OutsideModel where the model was not fitted."""
    if signal_norm <= 0:
        raise OutsideModel(f"--signal-norm {signal_norm:g}: must be > 0")
    horizons = sorted(model["horizon"].unique())
    horizon = horizons[-1] if steps is None else steps
    if horizon not in horizons:
        raise OutsideModel(f"--steps {steps}: the model was fitted at horizons {', '.join(map(str, horizons))} only")
    at = model[model["horizon"] == horizon]
    for axis, value in (("d", d), ("n", n)):
        low, high = at[axis].min(), at[axis].max()
        if not low <= value <= high:
            raise OutsideModel(
                f"--{axis} {value:g}: outside the fitted range {low:g} to {high:g} at horizon {horizon} steps"
            )
    parts = {}
    for name in (NOT_OVERFITTING, SELECTION):
        rows = at[at["boundary"] == name]
        if rows.empty:
            raise OutsideModel(f"no {name} boundary was fitted at horizon {horizon} steps (its labels never change)")
        parts[name] = _boundary(rows, d, n)
    probs = {}
    # P(side) falls as ||mu||* rises: the interval's ends come from the boundary's high and low ends
    for name, (star, low, high, k) in parts.items():
        probs[name] = (_side(signal_norm, star, k), _side(signal_norm, high, k), _side(signal_norm, low, k))
    no, sel = probs[NOT_OVERFITTING], probs[SELECTION]

    def combine(f):
        corners = [f(a, b) for a in no for b in sel]
        return f(no[0], sel[0]), min(corners), max(corners)

    regimes = {
        "not_overfitting": no,
        "benign": combine(lambda a, b: (1 - a) * b),
        "harmful": combine(lambda a, b: (1 - a) * (1 - b)),
    }
    return {"horizon": int(horizon), "regimes": regimes, "boundaries": {k: v[:3] for k, v in parts.items()}}
