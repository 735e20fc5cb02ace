"""Regime boundaries fitted from runs (docs/regimes.md#fitted-boundaries).

Along the signal norm at a fixed (d, n), the fraction of seeds in a regime moves from 0 to 1
across a transition. :func:`transition` fits a logistic curve in log ||mu|| to the seeds' binary
labels (maximum likelihood, with a weak penalty on the steepness so that cleanly separated
labels give the midpoint of the gap), giving the transition norm ||mu||* and its standard error.
:func:`power_law` fits log ||mu||* = log c + a log d + b log n by least squares over the
transitions, and :func:`bootstrap` resamples the seeds to give confidence intervals of the
fitted constants. The theory's exponents: a = 1/2 and b = -1/2 for the not-overfitting boundary
(SNR^2 ~ 1/n), a = 1/4 for the harmful one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import minimize

RIDGE = 1e-3  # penalty on the squared steepness (per unit of log ||mu||) of the logistic curve


@dataclass(frozen=True)
class Transition:
    mu_star: float  # ||mu|| at which half the seeds are in the regime
    log_se: float  # standard error of log mu_star
    steepness: float  # > 0: the regime's fraction grows with ||mu||


def transition(norms, labels) -> Transition | None:
    """The logistic transition of binary ``labels`` (one per run) along ``norms``; None where the
    labels do not change over the range, or the fitted midpoint lies far outside it."""
    x = np.log(np.asarray(norms, dtype=float))
    y = np.asarray(labels, dtype=float)
    if y.min() == y.max():
        return None
    scale = max(x.max() - x.min(), 1e-9)

    def loss(theta):
        x0, k = theta
        z = k * (x - x0)
        return float(np.sum(np.logaddexp(0.0, z) - y * z) + RIDGE * (k * scale) ** 2)

    corr = np.corrcoef(x, y)[0, 1] if np.std(x) > 0 else 1.0
    start = np.array([x[np.argmin(np.abs(np.cumsum(y) / y.sum() - 0.5))], 4.0 / scale * np.sign(corr or 1.0)])
    fit = minimize(loss, start, method="BFGS")
    x0, k = fit.x
    if not x.min() - 0.5 * scale <= x0 <= x.max() + 0.5 * scale:  # a midpoint far outside the sweep: none in it
        return None
    try:
        log_se = float(np.sqrt(max(np.linalg.inv(_hessian(loss, fit.x))[0, 0], 0.0)))
    except np.linalg.LinAlgError:
        log_se = float("nan")
    return Transition(float(np.exp(x0)), log_se, float(k))


def _hessian(f, at: np.ndarray, h: float = 1e-4) -> np.ndarray:
    """Central-difference Hessian of ``f`` at ``at`` (the observed information of a likelihood)."""
    n = at.size
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            e_i, e_j = np.eye(n)[i] * h, np.eye(n)[j] * h
            out[i, j] = (f(at + e_i + e_j) - f(at + e_i - e_j) - f(at - e_i + e_j) + f(at - e_i - e_j)) / (4 * h * h)
    return out


@dataclass(frozen=True)
class PowerLaw:
    c: float
    a: float | None  # exponent of d; None where d takes one value
    b: float | None  # exponent of n; None where n takes one value


def power_law(points: pd.DataFrame) -> PowerLaw:
    """Least squares of log mu_star = log c + a log d + b log n over ``points`` (columns d, n,
    mu_star); an axis with a single value is left out of the fit."""
    cols, names = [np.ones(len(points))], []
    for axis in ("d", "n"):
        if points[axis].nunique() > 1:
            cols.append(np.log(points[axis].to_numpy(dtype=float)))
            names.append(axis)
    coef = np.linalg.lstsq(np.stack(cols, 1), np.log(points["mu_star"].to_numpy(dtype=float)), rcond=None)[0]
    found = dict(zip(names, coef[1:]))
    return PowerLaw(float(np.exp(coef[0])), found.get("d"), found.get("n"))


def transitions(runs: pd.DataFrame, label: str) -> pd.DataFrame:
    """One row per (d, n) with a transition: d, n, mu_star, log_se, seeds. ``runs``: columns d,
    n, signal_norm, seed and the boolean column ``label``."""
    rows = []
    for (d, n), cell in runs.groupby(["d", "n"]):
        t = transition(cell["signal_norm"], cell[label])
        if t is not None:
            rows.append({"d": d, "n": n, "mu_star": t.mu_star, "log_se": t.log_se, "seeds": cell["seed"].nunique()})
    return pd.DataFrame(rows, columns=["d", "n", "mu_star", "log_se", "seeds"])


def regime_transitions(runs: pd.DataFrame, labels: pd.DataFrame, regime: str) -> pd.DataFrame:
    """:func:`transitions` of one regime at one horizon: ``labels`` (run_id, regime) from
    benign.theory.regimes_at at that horizon, ``runs`` with run_id, d, n, signal_norm, seed."""
    cells = labels.merge(runs[["run_id", "d", "n", "signal_norm", "seed"]], on="run_id")
    return transitions(cells.assign(inside=cells["regime"] == regime), "inside")


def bootstrap(runs: pd.DataFrame, label: str, draws: int = 200, seed: int = 0, level: float = 0.95) -> dict:
    """The power law of the transitions, and percentile intervals over ``draws`` resamplings of
    the seeds (with replacement): {"fit": PowerLaw, "c"|"a"|"b": (low, high)}."""
    fit = power_law(transitions(runs, label))
    seeds = np.sort(runs["seed"].unique())
    rng = np.random.default_rng(seed)
    by_seed = {s: g for s, g in runs.groupby("seed")}
    samples = {"c": [], "a": [], "b": []}
    for _ in range(draws):
        pick = rng.choice(seeds, size=seeds.size, replace=True)
        resampled = pd.concat([by_seed[s].assign(seed=i) for i, s in enumerate(pick)])
        points = transitions(resampled, label)
        if len(points) < 2:
            continue
        law = power_law(points)
        for name in samples:
            value = getattr(law, name)
            if value is not None:
                samples[name].append(value)
    tail = (1 - level) / 2 * 100
    out = {"fit": fit}
    for name, values in samples.items():
        out[name] = tuple(np.percentile(values, [tail, 100 - tail])) if values else None
    return out


def agreement(cells: pd.DataFrame, label: str, law: PowerLaw, above: bool) -> tuple[float, int]:
    """How well a fitted boundary separates the cells: (the fraction of the cells on the
    regime's side of ``law`` (above it when ``above``) whose seeds are mostly in the regime, and
    how many cells are on that side). ``cells``: one row per run with d, n, signal_norm and the
    boolean ``label``, averaged here over the seeds of each (d, n, signal_norm)."""
    per_cell = cells.groupby(["d", "n", "signal_norm"])[label].mean().reset_index()
    star = law.c * per_cell["d"] ** (law.a or 0.0) * per_cell["n"] ** (law.b or 0.0)
    side = per_cell["signal_norm"] > star if above else per_cell["signal_norm"] < star
    if not side.any():
        return float("nan"), 0
    return float((per_cell.loc[side, label] > 0.5).mean()), int(side.sum())
