"""Boundaries fitted to crossings, one per line, seed and horizon (docs/regimes.md#crossings).

The runs of one (d, n, seed) line share their noise, flips and initialisation (and no other
line's: benign.synthetic.gram draws each line's own), so along the line their labels are one
deterministic function of ||mu||: they carry one observation of where the boundary lies, not
one per run. Each line, seed and horizon gives one crossing ||mu||*, known only between two
sampled norms: the last norm below the first run on the boundary's upper side, and the first
norm above the last run on its lower side. A line whose labels change more than once gets the
bracket that holds every change, and is counted. A line on one side throughout is censored at
its end norm, never dropped.

The crossings are fitted by interval-censored maximum likelihood (scipy's L-BFGS-B on the
analytic score): log ||mu||* = x beta + offset + sigma z, z standard normal, with these laws of
d and n (:data:`LAWS`):
- "power": c d^a n^b, the product law;
- "theory": the theorem's exponents with a log factor, c d^a0 (ln d)^gamma n^b, the exponents
  ``fixed`` held (the lower boundary keeps b free, the upper holds b too);
- "exponents": the theorem's exponents alone, c d^a0 n^b0 (only c fitted);
- "decades": one slope of log d per decade between neighbouring grid d (a piecewise-linear law),
  and b;
- "octaves": a, and one slope of log n between neighbouring grid n (the knots are then n's);
- "nlog": the theorem's exponent of n with a log factor, c d^a n^b0 (ln n)^gamma_n.
Intervals are Student's t intervals on G - 1 degrees of freedom from the delete-one-(d, n)-line
jackknife (G lines) plus the grid's variance: the seeds of a line are independent draws, but
whatever the law misses at a (d, n) they miss together, so the lines are the units an exponent is
fitted across; the law's exponent of d is then the slope averaged over the design's d, curvature
included. The grid's variance is that of least squares on the lines were each line's crossing
off by a uniform error across its resolution: where the crossings are known only to their
brackets (sigma at its floor) a refit moves little whatever lies inside them, so the jackknife
alone cannot see that error. Models are compared by AIC and by the held-out log-likelihood of
each line's crossings under the fit to the other lines (the prediction's variance carries the
fit's, from the sandwich clustered by line: the cheaper of the two), beside a law without d or n
(the base rate).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import t as student

from benign.analysis import interval_censored as ic
from benign.analysis.interval_censored import log_likelihood

LEVEL = 0.95
LAWS = {"power": "c d^a n^b", "theory": "c d^a0 (ln d)^gamma n^b0", "exponents": "c d^a0 n^b0", "decades": "c, one slope of log d per decade, n^b",
        "octaves": "c d^a, one slope of log n between neighbouring n", "nlog": "c d^a n^b0 (ln n)^gamma_n",
        "none": "c (no law of d or n)"}  # fmt: skip
LINE = ["d", "n", "seed"]


def crossings(cells: pd.DataFrame, side: str = "side") -> pd.DataFrame:
    """One crossing per (d, n, seed) of ``cells`` (one horizon; columns d, n, seed, signal_norm
    and the boolean ``side``, True above the boundary): ``lower`` and ``upper`` (0 where the whole
    line is above, inf where it is below), ``censored`` ("left", "right" or "") and
    ``changes``, how many times the label changes along the line (1 for a clean crossing)."""
    rows = []
    for (d, n, seed), line in cells.groupby(LINE):
        line = line.sort_values("signal_norm")
        norms, above = line["signal_norm"].to_numpy(float), line[side].to_numpy(bool)
        changes = int(np.sum(above[1:] != above[:-1]))
        first_above = np.flatnonzero(above)
        last_below = np.flatnonzero(~above)
        lower = norms[first_above[0] - 1] if len(first_above) and first_above[0] > 0 else 0.0
        upper = norms[last_below[-1] + 1] if len(last_below) and last_below[-1] < len(norms) - 1 else np.inf
        if not len(first_above):
            lower = norms[-1]
        if not len(last_below):
            upper = norms[0]
        censored = "left" if lower == 0 else "right" if not np.isfinite(upper) else ""
        rows.append({"d": d, "n": n, "seed": seed, "lower": float(lower), "upper": float(upper),
                     "censored": censored, "changes": changes, "runs": len(line)})  # fmt: skip
    return pd.DataFrame(rows, columns=[*LINE, "lower", "upper", "censored", "changes", "runs"])


def line_resolution(cr: pd.DataFrame) -> float:
    """How finely the crossings place a line's boundary, in log ||mu||: per (d, n) line, the
    least gap between the distinct ends of its closed brackets (its seeds' staggered norms; one
    bracket's width where all its seeds share one), the median over the lines. NaN where no
    bracket is closed."""
    return _median_gap(list(_line_gaps(cr).values()))


def _line_gaps(cr: pd.DataFrame) -> dict[tuple, float]:
    """Each (d, n) line's least gap between the distinct ends of its closed brackets, in log
    ||mu|| (NaN where it has one end), by (d, n); lines without a closed bracket absent."""
    closed = ((cr["lower"] > 0) & np.isfinite(cr["upper"])).to_numpy()
    lower, upper = cr["lower"].to_numpy(float)[closed], cr["upper"].to_numpy(float)[closed]
    keys, line = np.unique(np.column_stack([cr["d"].to_numpy(float)[closed], cr["n"].to_numpy(float)[closed]]),
                           axis=0, return_inverse=True)  # fmt: skip
    gaps = {}
    for i, key in enumerate(keys):
        ends = np.unique(np.round(np.log(np.r_[lower[line == i], upper[line == i]]), 9))
        gaps[tuple(key)] = np.diff(ends).min() if len(ends) > 1 else np.nan
    return gaps


def _median_gap(gaps: list) -> float:
    gaps = [g for g in gaps if np.isfinite(g) and g > 0]
    return float(np.median(gaps)) if gaps else float("nan")


def sigma_floor(cr: pd.DataFrame) -> float:
    """The least scatter the crossings can resolve: the standard deviation of a point spread
    evenly across a line's resolution (:func:`line_resolution`). Below it the brackets cannot
    tell scatter from none, and the likelihood would drive sigma to 0 (every crossing inside its
    bracket)."""
    return _floor(line_resolution(cr))


def _floor(resolution: float) -> float:
    return resolution / math.sqrt(12) if np.isfinite(resolution) else 1e-3


@dataclass(frozen=True)
class CrossingFit:
    """A law fitted to crossings: its terms' estimates and 95% intervals, sigma (the crossings'
    scatter in log ||mu||), the log-likelihood, AIC, the crossings and (d, n) lines fitted, the
    covariance of the terms the intervals are drawn from (clustered by line, plus the grid's; the
    regime model's, for ||mu||* at a new (d, n)), each term's half-width from the grid alone
    (``grid``: what a line known only to its resolution would give), whether sigma sits at its
    floor; the knots and fixed exponents it was fitted with (held-out predictions rebuild its
    design from them)."""

    law: str
    estimates: dict
    intervals: dict
    sigma: float
    loglik: float
    aic: float
    crossings: int
    cov: pd.DataFrame
    knots: tuple = ()
    fixed: tuple = ()
    lines: int = 0
    grid: dict = field(default_factory=dict)
    at_floor: bool = False


def put_term(row: dict, f: CrossingFit | None, term: str, name: str, transform=lambda v: v) -> None:
    """A term's estimate and 95% interval into ``row`` as name, name_low, name_high (NaN where not
    fitted or without an interval): how the tables' rows hold a fit."""
    value = f.estimates.get(term, np.nan) if f else np.nan
    low, high = f.intervals.get(term, (np.nan, np.nan)) if f else (np.nan, np.nan)
    row[name], row[f"{name}_low"], row[f"{name}_high"] = transform(value), transform(low), transform(high)


def decade_knots(d) -> tuple[float, ...]:
    """The sorted distinct d of the crossings: the ends of the decades' slopes."""
    return tuple(float(v) for v in np.unique(np.asarray(d, dtype=float)))


def _design(cr: pd.DataFrame, law: str, fixed: dict, knots: tuple, terms: list | None = None):
    """(X with named columns, offset) of ``law`` at the crossings' (d, n). ``terms``: keep these
    columns (a fit's), else those the data can fit (an axis with one value left out)."""
    X, offset = _columns(cr, law, fixed, knots)
    if terms is not None:
        return X[[t for t in terms if t in X]], offset
    return _fittable(X), offset


def _fittable(X: pd.DataFrame) -> pd.DataFrame:
    """The columns of ``X`` its rows can fit: the intercept and every column that varies."""
    keep = [c for c in X if c == "log_c" or np.ptp(X[c].to_numpy()) > 0]
    if "e" in keep and not {"a", "b"} <= set(keep):  # log d log n without both axes is one of them rescaled
        keep.remove("e")
    return X[keep]


def _columns(cr: pd.DataFrame, law: str, fixed: dict, knots: tuple):
    """(every column of ``law``'s X, offset) at the crossings' (d, n)."""
    log_d, log_n = np.log(cr["d"].to_numpy(float)), np.log(cr["n"].to_numpy(float))
    cols = {"log_c": np.ones(len(cr))}
    offset = np.zeros(len(cr))
    if law == "power":
        cols["a"], cols["b"] = log_d, log_n
    elif law == "interaction":
        cols["a"], cols["b"], cols["e"] = log_d, log_n, log_d * log_n
    elif law == "theory":
        offset = fixed.get("a", 0.0) * log_d + fixed.get("b", 0.0) * log_n
        cols["gamma"] = np.log(np.log(cr["d"].to_numpy(float)))
        if "b" not in fixed:
            cols["b"] = log_n
    elif law == "exponents":
        offset = fixed.get("a", 0.0) * log_d + fixed.get("b", 0.0) * log_n
    elif law == "octaves":  # knots: the n grid (benign.analysis.n_law), not d's
        cols["a"] = log_d
        logs = np.log(np.asarray(knots, dtype=float))
        for lo, hi, k0, k1 in zip(logs[:-1], logs[1:], knots[:-1], knots[1:]):
            cols[n_slope_name(k0, k1)] = np.clip(log_n - lo, 0.0, hi - lo)
    elif law == "nlog":
        offset = fixed.get("b", 0.0) * log_n
        cols["a"], cols["gamma_n"] = log_d, np.log(log_n)
    elif law == "decades":
        logs = np.log(np.asarray(knots, dtype=float))
        for lo, hi, k0, k1 in zip(logs[:-1], logs[1:], knots[:-1], knots[1:]):
            cols[slope_name(k0, k1)] = np.clip(log_d - lo, 0.0, hi - lo)
        cols["b"] = log_n
    elif law != "none":
        raise ValueError(f"law {law!r}: not one of {sorted([*LAWS, 'interaction'])}")
    return pd.DataFrame(cols, index=cr.index), offset


def slope_name(k0: float, k1: float) -> str:
    """The decade slope's term, e.g. "a[1e+03,1e+04]"."""
    return f"a[{k0:.0e},{k1:.0e}]".replace("+0", "+")


def n_slope_name(k0: float, k1: float) -> str:
    """The slope of log n between two grid n (law "octaves"), e.g. "b[10,20]"."""
    return f"b[{k0:g},{k1:g}]"


def fit(cr: pd.DataFrame, law: str = "power", fixed: dict | None = None, knots: tuple | None = None,
        intervals: bool = True) -> CrossingFit | None:  # fmt: skip
    """``law`` fitted to the crossings ``cr`` (:func:`crossings`) by interval-censored maximum
    likelihood (sigma at least :func:`sigma_floor`); ``fixed``: the exponents the "theory" law
    holds ({"a": 0.25} or {"a": 0.5, "b": -0.5}). ``intervals``: True, Student's t on G - 1 degrees
    of freedom from the delete-one-(d, n)-line jackknife's covariance (G lines; a term a refit
    cannot fit, a decade only the left-out line spans, gets no interval) plus the grid's
    (:func:`_grid_covariance`); "sandwich", the same from the sandwich covariance clustered by line
    (CR1: cheaper, narrower with few lines) plus the grid's; False, none. None where no crossing
    is bracketed on both sides (nothing locates the boundary)."""
    if cr.empty or (cr["censored"] != "").all():
        return None
    fixed = dict(fixed or {})
    knots = decade_knots(cr["d"]) if knots is None else knots
    X, offset = _design(cr, law, fixed, knots)
    lower, upper = cr["lower"].to_numpy(float), cr["upper"].to_numpy(float)
    x = X.to_numpy(float)
    gaps = _line_gaps(cr)
    floor = _floor(_median_gap(list(gaps.values())))  # sigma_floor(cr), from the gaps the jackknife reuses
    params = ic.maximise(x, offset, lower, upper, floor)
    nll = ic.negative_log_likelihood(params, x, offset, lower, upper)[0]
    groups = cr.groupby(["d", "n"]).ngroup().to_numpy()
    lines = int(len(np.unique(groups)))
    at_floor = params[-1] <= math.log(floor) + 1e-6
    cov = np.full((len(params), len(params)), np.nan)
    if intervals == "sandwich" and lines > 1:
        cov = ic.clustered_covariance(params, x, offset, lower, upper, groups, held=at_floor)
    elif intervals and lines > 2:
        cov = _jackknife_covariance(cr, groups, gaps, law, fixed, knots, list(X.columns), len(params))
    grid_cov = _grid_covariance(X, groups, floor * math.sqrt(12)) if intervals else None
    if grid_cov is not None:  # the brackets' own uncertainty, which the refits barely see (NaN stays NaN)
        cov[:-1, :-1] += grid_cov
    quantile = float(student.ppf(0.5 + LEVEL / 2, max(lines - 1, 1)))
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))  # NaN where a term has no variance: no interval
    ci = np.column_stack([params - quantile * se, params + quantile * se])
    llf = -nll
    names = list(X.columns)
    est = {t: float(v) for t, v in zip(names, params[:-1])}
    ivals = {t: (float(ci[i, 0]), float(ci[i, 1])) for i, t in enumerate(names)}
    covariance = pd.DataFrame(cov[:-1, :-1], index=names, columns=names)
    grid = _grid_half_widths(grid_cov, names, quantile) if intervals else {}
    return CrossingFit(law, est, ivals, float(np.exp(params[-1])), float(llf), float(2 * len(params) - 2 * llf),
                       len(cr), covariance, tuple(knots), tuple(sorted(fixed.items())), lines, grid,
                       bool(at_floor))  # fmt: skip


def _jackknife_covariance(cr: pd.DataFrame, groups: np.ndarray, gaps: dict, law: str, fixed: dict, knots: tuple,
                          names: list, size: int) -> np.ndarray:  # fmt: skip
    """The delete-one-line jackknife covariance of the terms ``names``: the law refitted with each
    (d, n) line left out, (G - 1) / G times the sum of the outer products of the refits'
    deviations from their mean. A term some refit cannot fit (a decade that only the left-out
    line spans) gets no variance: the jackknife never sees that line's miss, so it has no interval
    (NaN). Sigma's entries are NaN. ``gaps``: :func:`_line_gaps` of ``cr``."""
    values = _jackknife_refits(cr, groups, gaps, law, fixed, knots, names)
    cov = np.full((size, size), np.nan)
    whole = np.isfinite(values).all(axis=0)
    k = len(values)
    for i in np.flatnonzero(whole):
        for j in np.flatnonzero(whole):
            u, v = values[:, i] - values[:, i].mean(), values[:, j] - values[:, j].mean()
            cov[i, j] = (k - 1) / k * float(u @ v)
    return cov


def _jackknife_refits(cr: pd.DataFrame, groups: np.ndarray, gaps: dict, law: str, fixed: dict, knots: tuple,
                      names: list) -> np.ndarray:  # fmt: skip
    """The terms ``names`` of the law refitted with each (d, n) line left out, one row per line:
    the estimates of ``fit(cr[groups != g], law, fixed, knots, intervals=False)`` (NaN for a term
    it cannot fit), from one design and one set of line gaps sliced."""
    X, offset = _columns(cr, law, fixed, knots)
    lower, upper = cr["lower"].to_numpy(float), cr["upper"].to_numpy(float)
    censored = (cr["censored"] != "").to_numpy()
    line_of = list(zip(cr["d"].to_numpy(float), cr["n"].to_numpy(float)))
    refits = []
    for g in np.unique(groups):
        keep = groups != g
        if censored[keep].all():
            refits.append([np.nan] * len(names))
            continue
        x = _fittable(X[keep])
        left_out = line_of[int(np.flatnonzero(~keep)[0])]
        floor = _floor(_median_gap([gap for key, gap in gaps.items() if key != left_out]))
        params = ic.maximise(x.to_numpy(float), offset[keep], lower[keep], upper[keep], floor)
        estimates = dict(zip(x.columns, params[:-1]))
        refits.append([float(estimates[t]) if t in estimates else np.nan for t in names])
    return np.array(refits, dtype=float)


def _grid_covariance(X: pd.DataFrame, groups: np.ndarray, resolution: float) -> np.ndarray | None:
    """The terms' covariance were every line's crossing known only to within its resolution (a
    uniform error of that width, variance resolution^2 / 12, independent between lines) and the
    law fitted to the lines by least squares: (resolution^2 / 12) (X_lines' X_lines)^-1, X_lines
    one row per (d, n) line. The fit's covariance adds it to the jackknife's (or the sandwich's):
    a line's crossing can lie anywhere in its bracket, and where the brackets are all the data
    say (sigma at its floor) the refits barely move with it. Where the scatter is resolved it is
    small beside theirs. None where the lines cannot fit every term."""
    lines = X.groupby(groups).first().to_numpy(float)
    if np.linalg.matrix_rank(lines) < lines.shape[1]:
        return None
    return (resolution**2 / 12) * np.linalg.pinv(lines.T @ lines)


def _grid_half_widths(grid_cov: np.ndarray | None, names: list, quantile: float) -> dict:
    """Each term's 95% half-width from :func:`_grid_covariance` alone: what the grid allows (NaN
    where the lines cannot fit every term). The intervals hold this variance and the
    jackknife's: one no wider than sqrt(2) times this is set more by the grid than by the
    data."""
    if grid_cov is None:
        return {t: float("nan") for t in names}
    return {t: float(quantile * math.sqrt(v)) for t, v in zip(names, np.diag(grid_cov))}


def _all_terms(law: str, fixed: dict | None, knots: tuple) -> list[str]:
    """Every term of ``law``, whether or not some crossings can fit it."""
    probe = pd.DataFrame({"d": [knots[0], knots[-1]], "n": [1.0, 2.0]})
    return list(_design(probe, law, dict(fixed or {}), knots, terms=["log_c", "a", "b", "e", "gamma",
                *(slope_name(k0, k1) for k0, k1 in zip(knots[:-1], knots[1:]))])[0].columns)  # fmt: skip


def _estimate(f: CrossingFit, term: str) -> float:
    """A term's estimate; a decade slope the fit lacks takes its nearest fitted decade's."""
    if term in f.estimates:
        return f.estimates[term]
    if term.startswith("a["):
        names = [slope_name(k0, k1) for k0, k1 in zip(f.knots[:-1], f.knots[1:])]
        j = names.index(term)
        fitted = [i for i, name in enumerate(names) if name in f.estimates]
        return f.estimates[names[min(fitted, key=lambda i: abs(i - j))]] if fitted else 0.0
    return 0.0


def held_out_scores(cr: pd.DataFrame, law: str = "power", fixed: dict | None = None) -> np.ndarray:
    """Each crossing's log-likelihood under ``law`` fitted to the other (d, n) lines' crossings
    (independent draws: no seed of the left-out line is among them), in the order of ``cr``. The
    prediction carries the fit's uncertainty: log ||mu||* ~ N(x beta, sigma^2 + x' Cov x). The
    slope of a decade no other line spans is taken from the nearest fitted decade (the
    piecewise-linear law extended). Empty with under 3 lines or when a fold has nothing
    bracketed."""
    lines = cr.groupby(["d", "n"]).ngroup().to_numpy()
    if lines.max(initial=-1) < 2:
        return np.array([])
    knots = decade_knots(cr["d"])
    every = _all_terms(law, fixed, knots)
    scores = np.full(len(cr), np.nan)
    for line in np.unique(lines):
        train, test = cr[lines != line], cr[lines == line]
        f = fit(train, law, fixed, knots, intervals="sandwich")
        if f is None:
            return np.array([])
        X, offset = _design(test, law, dict(f.fixed), knots, terms=every)
        # a term constant over the training lines is in the fit's constant: add it as a change from there
        trained_at = _design(train, law, dict(f.fixed), knots, terms=every)[0].iloc[0]
        beta = np.array([_estimate(f, t) for t in every])
        base = np.array([0.0 if t in f.estimates else trained_at[t] for t in every])
        x = X.to_numpy(float) - base
        loads = _loadings(f, every)  # each term's column onto the fitted terms it takes its estimate from
        xf = x @ loads
        cov = np.nan_to_num(f.cov.to_numpy(float), nan=0.0)
        var = f.sigma**2 + np.einsum("ij,jk,ik->i", xf, cov, xf)
        scores[lines == line] = log_likelihood(test["lower"], test["upper"], x @ beta + offset, np.sqrt(var))
    return scores


def _loadings(f: CrossingFit, every: list[str]) -> np.ndarray:
    """(terms of ``every``, the fit's terms): 1 where a term's estimate is that fitted term's
    (itself, or the nearest fitted decade's slope), 0 elsewhere."""
    names = list(f.estimates)
    out = np.zeros((len(every), len(names)))
    slopes = [slope_name(k0, k1) for k0, k1 in zip(f.knots[:-1], f.knots[1:])]
    fitted = [i for i, s in enumerate(slopes) if s in f.estimates]
    for i, term in enumerate(every):
        if term in f.estimates:
            out[i, names.index(term)] = 1.0
        elif term.startswith("a[") and fitted:
            j = slopes.index(term)
            out[i, names.index(slopes[min(fitted, key=lambda k: abs(k - j))])] = 1.0
    return out


def held_out_gain(cr: pd.DataFrame, scores: np.ndarray, base: np.ndarray) -> tuple[float, float]:
    """(mean, standard error) of the held-out log-likelihood per crossing of a law over the base
    rate's, the errors clustered by (d, n) line (statsmodels OLS on a constant, cluster-robust:
    a line's crossings share its fold's fit). NaN without scores."""
    import statsmodels.api as sm

    if not len(scores) or not len(base):
        return float("nan"), float("nan")
    diff = np.asarray(scores, dtype=float) - np.asarray(base, dtype=float)
    groups = cr.groupby(["d", "n"]).ngroup().to_numpy()
    ols = sm.OLS(diff, np.ones((len(diff), 1))).fit(cov_type="cluster", cov_kwds={"groups": groups})
    return float(ols.params[0]), float(ols.bse[0])
