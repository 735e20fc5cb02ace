"""The regime predictor: P(regime) at (d, n, ||mu||, steps) from the fitted regime model
(results/tables/regime_model.csv, benign.tables.boundaries.regime_model).

Each boundary is the crossing law log ||mu||* = log c + a log d + b log n + sigma z fitted to
the atlas's crossings (benign.analysis.crossings), so P(side) at ||mu|| is
Phi((log ||mu|| - log ||mu||*) / sigma). The regimes combine the two boundaries read by the
normalised test loss, as independent: not overfitting with P_no, benign with (1 - P_no) P_sel,
harmful with (1 - P_no) (1 - P_sel). The interval of each probability spans the boundaries'
95% intervals at (d, n), from the covariance of the law's terms; the interval of ||mu||* given
for a boundary is that of a new crossing there (the law's variance plus sigma^2, with Student's
t on the lines the law was fitted across), the one a run at that setting would fall in. The
answer names the lr, the steps and the integrator to train such a run with (the atlas's step size
at that d), and whether (d, n) lies in the design region of the atlas's lines (d >= k n^2): a
setting inside the ranges of d and n but below it is answered with a warning.
Outside the fitted range of d and n, or at a horizon that was not fitted, the model does not
answer.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.stats import norm, t

from benign.synthetic.spec import lr_for

NOT_OVERFITTING, SELECTION = "not overfitting", "selection (harmful below)"
TERMS = ("log_c", "a", "b")


class OutsideModel(ValueError):
    """A question the fitted model cannot answer; the message names the value and the range."""


def _boundary(row: pd.Series, d: float, n: float) -> tuple[float, float, float, float, float]:
    """(log ||mu||*, the half-width of its 95% interval, of a new crossing's, sigma) at (d, n)."""
    x = np.array([1.0, math.log(d), math.log(n)])
    beta = np.array([row[t] for t in TERMS], dtype=float)
    cov = np.array([[row[f"cov_{t}_{u}"] for u in TERMS] for t in TERMS], dtype=float)
    var = float(x @ cov @ x)
    sigma = float(row["sigma"])
    # the law is fitted across lines (its covariance is the lines' jackknife): Student's t on the lines
    dof = max(int(row["lines"]) - len(TERMS), 1)
    quantile = float(t.ppf(0.975, dof))
    return float(x @ beta), quantile * math.sqrt(var), quantile * math.sqrt(var + sigma**2), sigma, var


def _side(signal_norm: float, log_star: float, sigma: float) -> float:
    return float(norm.cdf((math.log(signal_norm) - log_star) / sigma))


def predict(model: pd.DataFrame, d: float, n: float, signal_norm: float, steps: int | None = None) -> dict:
    """{"horizon": h, "step_size", "lr", "steps", "time", "regimes": {regime: (p, low, high)},
    "boundaries": {name: (||mu||*, low, high)}} at (d, n, ||mu||) after ``steps`` (default: the
    longest fitted horizon): the lr and steps to train a run that checks the prediction (the
    atlas's step size at this d), and a boundary's (low, high), the 95% interval of a new crossing
    at (d, n). Raises OutsideModel where the model was not fitted."""
    if signal_norm <= 0:
        raise OutsideModel(f"--signal-norm {signal_norm:g}: must be > 0")
    horizons = sorted(model["horizon"].unique())
    horizon = horizons[-1] if steps is None else steps
    if horizon not in horizons:
        raise OutsideModel(f"--steps {steps}: the model was fitted at horizons {', '.join(map(str, horizons))} only")
    at = model[model["horizon"] == horizon]
    parts = {}
    for name in (NOT_OVERFITTING, SELECTION):
        rows = at[at["boundary"] == name]
        if rows.empty:
            raise OutsideModel(f"no {name} boundary was fitted at horizon {horizon} steps (its labels never change)")
        row = rows.iloc[0]
        for axis, value in (("d", d), ("n", n)):
            low, high = row[f"{axis}_min"], row[f"{axis}_max"]
            if not low <= value <= high:
                raise OutsideModel(
                    f"--{axis} {value:g}: outside the fitted range {low:g} to {high:g} at horizon {horizon} steps"
                )
        parts[name] = _boundary(row, d, n)
    probs, stars = {}, {}
    # P(side) falls as ||mu||* rises: the interval's ends come from the boundary's high and low ends
    for name, (log_star, half, half_new, sigma, _) in parts.items():
        probs[name] = tuple(_side(signal_norm, log_star + shift, sigma) for shift in (0.0, half, -half))
        stars[name] = tuple(math.exp(log_star + shift) for shift in (0.0, -half_new, half_new))
    no, sel = probs[NOT_OVERFITTING], probs[SELECTION]

    def combine(f):
        corners = [f(a, b) for a in no for b in sel]
        return f(no[0], sel[0]), min(corners), max(corners)

    regimes = {
        "not_overfitting": no,
        "benign": combine(lambda a, b: (1 - a) * b),
        "harmful": combine(lambda a, b: (1 - a) * (1 - b)),
    }
    for name in at["boundary"]:  # the other boundaries fitted there (argmax, hard-max): their ||mu||* too
        row = at[at["boundary"] == name].iloc[0]
        if name not in stars and row["d_min"] <= d <= row["d_max"] and row["n_min"] <= n <= row["n_max"]:
            log_star, _, half_new, _, _ = _boundary(row, d, n)
            stars[name] = tuple(math.exp(log_star + shift) for shift in (0.0, -half_new, half_new))
    return {
        "horizon": int(horizon),
        **_schedule(at.iloc[0], d, horizon),
        "regimes": regimes,
        "boundaries": stars,
        "design": _design(at, d, n),
    }


def _design(at: pd.DataFrame, d: float, n: float) -> dict:
    """Where (d, n) lies against the design the model was fitted on: every atlas line has d >= k
    n^2 (k its least d / n^2); a setting below that is inside the ranges of d and n but in a
    corner no line covers, where the law extrapolates. {"inside": bool, "d_over_n2_min": k,
    "warning": words or ""}."""
    k = float(at["d_min_per_n2"].min()) if "d_min_per_n2" in at else float("nan")
    inside = not (np.isfinite(k) and d < k * n**2)
    warning = "" if inside else (f"d {d:g} < {k:g} n^2 = {k * n**2:g}: outside the design region d >= {k:g} n^2 of "
                                 "the atlas's lines; the law extrapolates there")  # fmt: skip
    return {"inside": inside, "d_over_n2_min": k, "warning": warning}


def _schedule(row: pd.Series, d: float, horizon: int) -> dict:
    """The training the prediction holds for, as the atlas ran it: its step size, the lr that
    gives it at d (benign.synthetic.spec.lr_for), the steps and the normalised time."""
    step, sigma = float(row.get("step_size", np.nan)), float(row.get("sigma_noise", 1.0))
    integrator = row.get("integrator") if isinstance(row.get("integrator"), str) else "gd"
    integration = {"integrator": integrator, "flow_tol": float(row["flow_tol"]) if integrator == "flow" else None}
    if not np.isfinite(step):
        return {"step_size": None, "lr": None, "steps": int(horizon), "time": None, **integration}
    return {
        "step_size": step,
        "lr": lr_for(step, sigma, d),
        "steps": int(horizon),
        "time": step * horizon,
        **integration,
    }
