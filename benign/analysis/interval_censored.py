"""Interval-censored normal regression: y ~ N(X beta + offset, sigma^2), each y known only to lie
in (log lower, log upper], by maximum likelihood (scipy's L-BFGS-B on the analytic score), with
the sandwich covariance clustered by groups of observations that share whatever the model misses.

The boundaries' crossings (benign.analysis.crossings: y = log ||mu||*) and the fit and
generalization times (benign.analysis.survival: y = log time, a log-normal accelerated
failure-time model; or the log of a delay's ratio of times, which may be negative) are fitted by
it. ``lower`` may be 0 (left-censored) and ``upper`` inf (right-censored).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize
from scipy.special import log_ndtr
from statsmodels.tools.numdiff import approx_fprime

LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _log_interval_probability(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """log(Phi(hi) - Phi(lo)) for lo < hi, stable in both tails."""
    flip = lo > 0  # use the upper tail: Phi(hi) - Phi(lo) = Phi(-lo) - Phi(-hi)
    a, b = np.where(flip, -hi, lo), np.where(flip, -lo, hi)
    log_b, log_a = log_ndtr(b), log_ndtr(a)
    with np.errstate(divide="ignore", invalid="ignore"):
        return log_b + np.log1p(-np.exp(np.minimum(log_a - log_b, 0.0)))


def log_likelihood(lower, upper, mean, sigma) -> np.ndarray:
    """Each crossing's log P(lower < ||mu||* <= upper) under log ||mu||* ~ N(mean, sigma^2)."""
    with np.errstate(divide="ignore"):
        lo = (np.log(np.asarray(lower, dtype=float)) - mean) / sigma
        hi = (np.log(np.asarray(upper, dtype=float)) - mean) / sigma
    return _log_interval_probability(lo, hi)


def scores(params, X, offset, lower, upper) -> tuple[np.ndarray, np.ndarray]:
    """Each observation's log-likelihood under log ||mu||* ~ N(X beta + offset, sigma^2), params =
    (beta, log sigma), and its gradient in the params (one row per crossing)."""
    beta, sigma = params[:-1], math.exp(params[-1])
    mean = X @ beta + offset
    with np.errstate(divide="ignore"):
        lo, hi = (np.log(lower) - mean) / sigma, (np.log(upper) - mean) / sigma
    logp = _log_interval_probability(lo, hi)
    # d log P / d mean = (phi(lo) - phi(hi)) / (sigma P); d log P / d log sigma = (lo phi(lo) - hi phi(hi)) / P
    with np.errstate(over="ignore", invalid="ignore"):
        w_lo = np.where(np.isfinite(lo), np.exp(-0.5 * lo**2 - LOG_SQRT_2PI - logp), 0.0)
        w_hi = np.where(np.isfinite(hi), np.exp(-0.5 * hi**2 - LOG_SQRT_2PI - logp), 0.0)
        d_mean = (w_lo - w_hi) / sigma
        d_log_sigma = np.where(np.isfinite(lo), lo * w_lo, 0.0) - np.where(np.isfinite(hi), hi * w_hi, 0.0)
    return logp, np.column_stack([X * d_mean[:, None], d_log_sigma])


def negative_log_likelihood(params, X, offset, lower, upper) -> tuple[float, np.ndarray]:
    """Minus the log-likelihood and its gradient (:func:`scores`)."""
    logp, grad = scores(params, X, offset, lower, upper)
    return -float(np.sum(logp)), -grad.sum(axis=0)


def maximise(X, offset, lower, upper, floor: float) -> np.ndarray:
    """The maximum-likelihood (beta, log sigma), sigma held at or above ``floor`` and at most ten
    times the span of the intervals' finite ends plus one (in log: where the data cannot bound
    sigma, as when every crossing a jackknife refit keeps is censored, its likelihood grows with
    sigma for ever), by scipy's L-BFGS-B from a least-squares start on the intervals' midpoints."""
    finite = np.isfinite(upper) & (lower > 0)
    mid = np.where(finite, np.sqrt(lower * np.where(finite, upper, 1.0)), np.where(lower > 0, lower * 2, upper / 2))
    scale = np.where(np.ptp(X, axis=0) > 0, X.std(axis=0), 1.0)  # columns on one scale: log d spans ~10
    Xs = X / scale
    beta = np.linalg.lstsq(Xs, np.log(mid) - offset, rcond=None)[0]
    resid = np.log(mid) - offset - Xs @ beta
    ends = np.log(np.r_[lower[lower > 0], upper[np.isfinite(upper)]])
    ceiling = max(10 * ((float(np.ptp(ends)) if ends.size else 0.0) + 1), 2 * floor)
    start = np.r_[beta, math.log(min(max(resid.std(), floor), ceiling))]
    bounds = [(None, None)] * X.shape[1] + [(math.log(floor), math.log(ceiling))]
    res = minimize(negative_log_likelihood, start, args=(Xs, offset, lower, upper), jac=True, method="L-BFGS-B",
                   bounds=bounds, options={"ftol": 1e-13, "gtol": 1e-9, "maxiter": 5000})  # fmt: skip
    return np.r_[res.x[:-1] / scale, res.x[-1]]


def clustered_covariance(params, x, offset, lower, upper, groups, held: bool) -> np.ndarray:
    """The sandwich covariance of the parameters, clustered by ``groups``: the observed
    information (statsmodels' numerical differentiation of the analytic score) around the sum of
    each cluster's outer product of its score, scaled by G / (G - 1); sigma left out where it is
    ``held`` at its floor."""
    hess = approx_fprime(params, lambda p: negative_log_likelihood(p, x, offset, lower, upper)[1], centered=True)
    hess = (hess + hess.T) / 2
    if not np.isfinite(hess).all():  # a likelihood that is not finite at its maximum: no covariance
        return np.full((len(params), len(params)), np.nan)
    each = scores(params, x, offset, lower, upper)[1]
    free = len(params) - 1 if held else len(params)
    by_group = np.array([each[groups == g, :free].sum(axis=0) for g in np.unique(groups)])
    count = len(by_group)
    meat = by_group.T @ by_group * count / max(count - 1, 1)
    bread = np.linalg.pinv(hess[:free, :free])
    cov = np.full((len(params), len(params)), np.nan)
    cov[:free, :free] = bread @ meat @ bread
    return cov
