"""Regime boundaries fitted from labelled runs (docs/regimes.md#crossings).

One binary label per run (the side of a boundary: not overfitting, or attention selecting at
test time), one model over every run at a horizon:

    P(side) = sigmoid(k (log ||mu|| - log c - a log d - b log n [- e log d log n]))

fitted by maximum likelihood. Written as a logistic regression, eta = k log ||mu|| + sum_j g_j u_j
(u = 1, log d, log n, log d log n and theta_j = -g_j / k), the likelihood is concave in (k, g),
and it stays concave when one theta_j is held fixed (the u_j term becomes an offset times k): so
the fit and each point of a profile likelihood are convex problems, solved by scipy's L-BFGS-B.
Intervals are profile-likelihood intervals (the theta_j where twice the log-likelihood drop
stays under the chi-square(1) quantile), found by scipy's brentq.

The steepness k is capped at ``k_max``: labels that flip between two grid norms in every line
are separated, their likelihood has no maximum (k grows without end), and any exponent that
keeps them separated fits them equally well. With the cap the profile is flat over exactly
those exponents, so the interval reports what the grid cannot tell apart instead of a width of
zero. ``k_max`` is set from the finest resolution the runs claim: a transition is not resolved
sharper than one factor ``resolution`` in ||mu|| (10% to 90% across it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import brentq, minimize
from scipy.stats import chi2

# (name, the label column of benign.analysis.theory.regimes_at whose True side lies above the
# boundary, whether that column is negated, the theory's exponent of d, of n, and the exponents
# the theory's law with a log factor holds): not overfitting above ||mu|| ~ sqrt(d / n);
# attention selects at test time above ||mu|| ~ d^(1/4) (harmful below), read by the normalised
# test loss r at the horizon, by the most-attended token, and by the test error of the hard-max
# readout (each sample reads its most-attended token: the long-time error the theorem states).
BOUNDARIES = (
    ("not overfitting", "overfits", True, 0.5, -0.5, {"a": 0.5, "b": -0.5}),
    ("selection (harmful below)", "selects", False, 0.25, 0.0, {"a": 0.25}),
    ("argmax selection", "selects_argmax", False, 0.25, 0.0, {"a": 0.25}),
    ("hard-max selection", "selects_hardmax", False, 0.25, 0.0, {"a": 0.25}),
)

# The exponents the set-up gives before any dynamics (docs/regimes.md#along-time), (label, term):
# (value, what gives it). The first step from p = 0 puts the argmax and hard-max boundaries at
# (d / n)^(1/4) (benign.analysis.first_step); at a fixed step size the dynamics see d only through
# SNR, so a contour of r or of the flipped labels' fit has a = 1/2. Such an exponent's agreement
# with the theorem's value is the set-up's, not a test of the theorem's long-time claim.
SET_UP = {
    ("selects_argmax", "a"): (0.25, "the first step"),
    ("selects_argmax", "b"): (-0.25, "the first step"),
    ("selects_hardmax", "a"): (0.25, "the first step"),
    ("selects_hardmax", "b"): (-0.25, "the first step"),
    ("selects", "a"): (0.5, "the normalisation (an SNR contour)"),
    ("overfits", "a"): (0.5, "the normalisation (an SNR contour)"),
}
LABEL_OF = {name: column for name, column, *_ in BOUNDARIES}
# each boundary's label column and whether it is negated (True above the boundary once read so)
SIDES = {name: (column, negate) for name, column, negate, *_ in BOUNDARIES}


def side_labels(labels: pd.DataFrame, runs: pd.DataFrame, column: str, negate: bool) -> pd.DataFrame:
    """The runs' (d, n, signal_norm, seed) with the boolean ``side`` of one boundary (``column``
    of benign.analysis.theory.regimes_at, negated or not), per horizon."""
    cells = labels.merge(runs[["run_id", "d", "n", "signal_norm", "seed"]], on="run_id")
    side = cells[column].astype(bool)
    return cells.assign(side=~side if negate else side)


TERMS = ("log_c", "a", "b", "e")  # theta: constant, exponent of d, of n, interaction log d log n
LEVEL = 0.95


def k_max_for(resolution: float) -> float:
    """The steepness at which P goes from 0.1 to 0.9 across one factor ``resolution`` in ||mu||."""
    return 2 * math.log(9) / math.log(resolution)


def design(runs: pd.DataFrame, interaction: bool = False) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(log ||mu||, U, the terms U holds): U's columns are 1, log d, log n and log d log n, an axis
    taking a single value (or the interaction, unless asked for and both axes vary) left out."""
    log_d, log_n = np.log(runs["d"].to_numpy(float)), np.log(runs["n"].to_numpy(float))
    cols, terms = [np.ones(len(runs))], ["log_c"]
    if runs["d"].nunique() > 1:
        cols.append(log_d)
        terms.append("a")
    if runs["n"].nunique() > 1:
        cols.append(log_n)
        terms.append("b")
    if interaction and "a" in terms and "b" in terms:
        cols.append(log_d * log_n)
        terms.append("e")
    return np.log(runs["signal_norm"].to_numpy(float)), np.stack(cols, 1), terms


def _nll(beta: np.ndarray, X: np.ndarray, y: np.ndarray, base: np.ndarray | float = 0.0) -> tuple[float, np.ndarray]:
    """Negative log-likelihood of the logistic model eta = X beta + base, and its gradient."""
    eta = X @ beta + base
    value = float(np.sum(np.logaddexp(0.0, eta) - y * eta))
    return value, X.T @ (0.5 * (1.0 + np.tanh(0.5 * eta)) - y)


def _fit(x: np.ndarray, U: np.ndarray, y: np.ndarray, k_max: float, fixed: dict[int, float] | None = None,
         start: np.ndarray | None = None) -> tuple[float, np.ndarray]:  # fmt: skip
    """The maximum-likelihood (k, theta) with the thetas of ``fixed`` (column of U -> value)
    held: eta = k (x - sum_fixed theta_j u_j) + sum_free g_j u_j. Returns (negative
    log-likelihood, [k, theta over U's columns])."""
    fixed = fixed or {}
    free = [j for j in range(U.shape[1]) if j not in fixed]
    shifted = x - sum(value * U[:, j] for j, value in fixed.items()) if fixed else x
    X = np.column_stack([shifted, U[:, free]])
    beta0 = np.zeros(X.shape[1])
    if start is not None:  # from a fit's (k, theta): g_j = -k theta_j
        beta0[0] = start[0]
        beta0[1:] = -start[0] * start[[j + 1 for j in free]]
    beta0[0] = min(max(beta0[0], 1e-3), k_max)
    bounds = [(0.0, k_max)] + [(None, None)] * len(free)
    res = minimize(_nll, beta0, args=(X, y), jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"maxiter": 10000, "ftol": 1e-14, "gtol": 1e-10})  # fmt: skip
    k = res.x[0]
    theta = np.empty(U.shape[1] + 1)
    theta[0] = k
    for j, value in fixed.items():
        theta[j + 1] = value
    for i, j in enumerate(free):
        theta[j + 1] = -res.x[i + 1] / k if k > 0 else np.nan
    return float(res.fun), theta


@dataclass(frozen=True)
class Boundary:
    """A fitted boundary ||mu||* = c d^a n^b (d^(e log n)): estimates, 95% profile intervals
    (NaN where the data leave that side open), the fit's terms and its log-likelihood."""

    estimates: dict  # "k", "c", "a", "b", "e" -> value (None where not fitted)
    intervals: dict  # the same keys -> (low, high)
    nll: float
    runs: int
    k_max: float

    def mu_star(self, d, n) -> np.ndarray:
        """The fitted boundary's ||mu|| at (d, n)."""
        e = self.estimates
        d, n = np.asarray(d, dtype=float), np.asarray(n, dtype=float)
        log = math.log(e["c"]) + (e["a"] or 0.0) * np.log(d) + (e["b"] or 0.0) * np.log(n)
        return np.exp(log + (e["e"] or 0.0) * np.log(d) * np.log(n))

    def probability(self, signal_norm, d, n) -> np.ndarray:
        """P(side) at (||mu||, d, n)."""
        z = self.estimates["k"] * (np.log(np.asarray(signal_norm, dtype=float)) - np.log(self.mu_star(d, n)))
        return 1.0 / (1.0 + np.exp(-z))


def fit(runs: pd.DataFrame, label: str, k_max: float, interaction: bool = False, intervals=True,
        fixed: dict[str, float] | None = None) -> Boundary | None:  # fmt: skip
    """The boundary of the boolean column ``label`` (True: the side above it) over ``runs``
    (columns d, n, signal_norm), with profile-likelihood intervals of its free terms (True: all;
    or the names among "k", "log_c", "a", "b", "e"); ``fixed``: terms held at given values (e.g.
    the theory's exponents). None where the labels do not change."""
    y = runs[label].to_numpy(float)
    if y.min() == y.max():
        return None
    x, U, terms = design(runs, interaction)
    held = {terms.index(t): v for t, v in (fixed or {}).items() if t in terms}
    nll, theta = _fit(x, U, y, k_max, held)
    est = {"k": float(theta[0]), **{t: None for t in TERMS}}
    for j, term in enumerate(terms):
        est[term] = float(theta[j + 1])
    ivals = {key: (np.nan, np.nan) for key in ("k", *TERMS)}
    wanted = ("k", *TERMS) if intervals is True else tuple(intervals or ())
    cut = chi2.ppf(LEVEL, 1) / 2
    for j, term in enumerate(terms):
        if j not in held and term in wanted:
            ivals[term] = _profile_interval(x, U, y, k_max, j, term, theta, nll, cut, held)
    if not held and "k" in wanted:
        ivals["k"] = _k_interval(x, U, y, k_max, theta, nll, cut)
    c = {"c": math.exp(est.pop("log_c"))}
    low, high = ivals.pop("log_c")
    return Boundary({**c, **est}, {"c": (math.exp(low), math.exp(high)), **ivals}, nll, len(runs), k_max)


SEARCH = {"log_c": 20.0, "a": 4.0, "b": 4.0, "e": 2.0}  # how far from the estimate an interval end is sought


def _profile_interval(x, U, y, k_max, j, term, theta, nll, cut, held=None) -> tuple[float, float]:
    """The profile-likelihood interval of theta_j, the terms ``held`` fixed (NaN on a side it
    does not close within SEARCH)."""
    centre = theta[j + 1]

    def excess(value: float) -> float:
        return _fit(x, U, y, k_max, {**(held or {}), j: value}, start=theta)[0] - nll - cut

    ends = []
    for sign in (-1.0, 1.0):
        inside, step, end = centre, 0.02, np.nan
        while abs(inside - centre) < SEARCH[term]:
            probe = inside + sign * step
            if excess(probe) > 0:
                end = brentq(excess, inside, probe, xtol=1e-5) if excess(inside) < 0 else probe
                break
            inside, step = probe, step * 2
        ends.append(end)
    return ends[0], ends[1]


def _k_interval(x, U, y, k_max, theta, nll, cut) -> tuple[float, float]:
    """The profile interval of k (its upper end NaN where it reaches the cap): with k held,
    eta = k x + U g is a convex fit of g alone."""
    g0 = -theta[0] * theta[1:]

    def excess(k: float) -> float:
        res = minimize(_nll, g0, args=(U, y, k * x), jac=True, method="L-BFGS-B")
        return float(res.fun) - nll - cut

    k = theta[0]
    low = brentq(excess, 1e-9, k, xtol=1e-5) if k > 1e-6 and excess(1e-9) > 0 else 0.0
    high = brentq(excess, k, k_max, xtol=1e-5) if k < k_max * (1 - 1e-9) and excess(k_max) > 0 else np.nan
    return low, high
