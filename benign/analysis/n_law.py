"""The exponent of n, the one the set-up does not give (docs/regimes.md#the-n-laws).

At a fixed step size an SNR contour has a = 1/2 at leading order, and the first step already
puts the selection boundaries at (d / n)^(1/4) (benign.analysis.first_step); what the theorem
claims beyond that is the exponent of n: none for the harmful boundary, -1/2 for the
not-overfitting one. Per boundary and horizon: law (i)'s b beside the theorem's and the first
step's -1/4; the theorem's exponent with a log factor (ln n)^gamma_n instead; the local slopes
of log n between neighbouring grid n ("octaves"). All from the lines' crossings
(benign.analysis.crossings), intervals from the delete-one-(d, n)-cell jackknife.

The not-overfitting label is an order statistic: "at least half of the k = eta n flipped labels
fitted" crosses where the ceil(k/2)-th largest of the flipped samples' own crossings lies, the
largest of 2 at n = 10, the 4th of 8 at n = 40, a quantile that falls towards the median as n
grows. So its b is the samples' b plus what the order statistic adds. Each flipped sample's
crossing is read from the fitted fraction (:func:`sample_crossings`), the samples' law fitted
to all of them, and the order statistic's share predicted from the spread of a line's samples
(independent normal samples: :func:`expected_order_statistic`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import integrate
from scipy.special import comb
from scipy.stats import norm
from scipy.stats import t as student

from benign.analysis import crossings
from benign.analysis.boundaries import BOUNDARIES, side_labels
from benign.analysis.theory import TOLERANCE, Criteria

FIRST_STEP_B = -0.25  # the first step's exponent of n for the selection boundaries (benign.analysis.first_step)
SAMPLES = "not overfitting, per flipped sample"  # the boundary name of the samples' own crossings


def n_knots(n) -> tuple[float, ...]:
    """The sorted distinct n: the ends of the local slopes of log n."""
    return tuple(float(v) for v in np.unique(np.asarray(n, dtype=float)))


def label_rank(k: int, criteria: Criteria) -> int:
    """Which largest of the k flipped samples' crossings the not-overfitting label crosses at:
    the label holds while at least ``fit_threshold`` k of them are fitted."""
    return max(1, math.ceil(criteria.fit_threshold * k - TOLERANCE * k))


def sample_crossings(labels: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """Each flipped sample's crossing at one horizon: per (d, n, seed) line with k flipped labels
    and rank j = 1..k, the crossing of "fewer than j fitted" (benign.analysis.crossings.crossings),
    which is the j-th largest of the samples' crossings where each sample's fit changes once
    along ||mu||. Columns of the crossings, and ``rank`` and ``k``."""
    cells = labels.merge(runs[["run_id", "d", "n", "signal_norm", "seed", "n_noisy"]], on="run_id")
    fitted = np.rint(cells["fit_noisy"].to_numpy(float) * cells["n_noisy"].to_numpy(float))
    out = []
    for j in range(1, int(np.max(cells["n_noisy"].to_numpy(), initial=0)) + 1):
        has = cells["n_noisy"].to_numpy() >= j
        cr = crossings.crossings(cells[has].assign(side=fitted[has] < j))
        out.append(cr.assign(rank=j))
    if not out:
        return pd.DataFrame(columns=[*crossings.LINE, "lower", "upper", "censored", "changes", "runs", "rank", "k"])
    cr = pd.concat(out, ignore_index=True)
    k = cells.groupby(crossings.LINE)["n_noisy"].first().rename("k")
    return cr.join(k, on=crossings.LINE)


def expected_order_statistic(j: int, k: int) -> float:
    """E of the j-th largest of k independent standard normals."""
    if k == 1:
        return 0.0
    weight = k * comb(k - 1, j - 1)
    density = lambda z: z * weight * norm.pdf(z) * norm.cdf(z) ** (k - j) * norm.sf(z) ** (j - 1)  # noqa: E731
    return float(integrate.quad(density, -12, 12)[0])


def within_line_spread(cr: pd.DataFrame) -> float:
    """The spread of a line's flipped samples' log crossings: the pooled variance of the geometric
    midpoints of each line's closed brackets about their line's mean (lines with two or more),
    less the variance the brackets' widths add (w^2 / 12, a crossing uniform in its bracket),
    as a standard deviation (0 where the widths explain it all). Brackets of a count whose label
    changes more than once are left out (their ends hold every change, not one crossing). NaN
    where no line has two, or where no line has two distinct brackets: the samples then lie
    within one bracket, and how far apart inside it the brackets cannot say."""
    closed = cr[(cr["lower"] > 0) & np.isfinite(cr["upper"]) & (cr["changes"] <= 1)]
    low, high = np.log(closed["lower"].to_numpy(float)), np.log(closed["upper"].to_numpy(float))
    frame = closed[crossings.LINE].assign(mid=0.5 * (low + high), width=high - low)
    groups = frame.groupby(crossings.LINE)["mid"]
    many = (groups.transform("size") > 1).to_numpy()
    dev = (frame["mid"] - groups.transform("mean")).to_numpy()[many]
    dof = int((groups.size()[groups.size() > 1] - 1).sum())
    distinct = groups.nunique()
    if dof <= 0 or not (distinct > 1).any():
        return float("nan")
    widths = frame["width"].to_numpy()[many]
    return float(math.sqrt(max(np.sum(dev**2) / dof - np.mean(widths**2) / 12, 0.0)))


def order_statistic_b(cr: pd.DataFrame, criteria: Criteria, spread: float) -> float:
    """The b the label's order statistic adds to the samples' b, were a line's flipped samples
    independent normal draws of standard deviation ``spread``: the slope on log n (with log d)
    of spread x E[the label's rank of k], least squares over the design's lines."""
    lines = cr.drop_duplicates(crossings.LINE)
    shift = [spread * expected_order_statistic(label_rank(int(k), criteria), int(k)) for k in lines["k"]]
    X = np.column_stack([np.ones(len(lines)), np.log(lines["d"].to_numpy(float)), np.log(lines["n"].to_numpy(float))])
    if np.linalg.matrix_rank(X) < 3:
        return float("nan")
    return float(np.linalg.lstsq(X, np.asarray(shift), rcond=None)[0][2])


def _b(f: crossings.CrossingFit | None) -> float:
    return f.estimates.get("b", np.nan) if f else np.nan


def difference_interval(label_cr: pd.DataFrame, sample_cr: pd.DataFrame) -> tuple[float, float, float]:
    """b of the label's crossings minus b of the samples' (law (i)), with its 95% interval from the
    delete-one-(d, n)-cell jackknife of the difference (both refitted without the cell)."""
    whole = _b(crossings.fit(label_cr, "power", intervals=False)) - _b(
        crossings.fit(sample_cr, "power", intervals=False)
    )
    cells = label_cr.drop_duplicates(["d", "n"])[["d", "n"]].itertuples(index=False)
    refits = []
    for d, n in cells:
        keep_l = ~((label_cr["d"] == d) & (label_cr["n"] == n))
        keep_s = ~((sample_cr["d"] == d) & (sample_cr["n"] == n))
        fl = crossings.fit(label_cr[keep_l], "power", intervals=False)
        fs = crossings.fit(sample_cr[keep_s], "power", intervals=False)
        refits.append(_b(fl) - _b(fs))
    values = np.array([v for v in refits if np.isfinite(v)])
    if len(values) < 3:
        return whole, np.nan, np.nan
    g = len(values)
    se = math.sqrt((g - 1) / g * np.sum((values - values.mean()) ** 2))
    q = float(student.ppf(0.975, g - 1))
    return whole, whole - q * se, whole + q * se


def _laws(row: dict, cr: pd.DataFrame, theory_b: float, knots: tuple) -> None:
    """Law (i)'s b, the octaves' slopes and the log factor's gamma_n (with AIC against law (i))."""
    power = crossings.fit(cr, "power")
    crossings.put_term(row, power, "b", "b")
    row["sigma"] = power.sigma if power else np.nan
    if len(knots) > 2:
        octaves = crossings.fit(cr, "octaves", knots=knots)
        for k0, k1 in zip(knots[:-1], knots[1:]):
            crossings.put_term(row, octaves, crossings.n_slope_name(k0, k1), crossings.n_slope_name(k0, k1))
    nlog = crossings.fit(cr, "nlog", {"b": theory_b})
    crossings.put_term(row, nlog, "gamma_n", "gamma_n")
    row["aic_nlog_minus_power"] = nlog.aic - power.aic if nlog and power else np.nan


def n_laws(runs: pd.DataFrame, labels: pd.DataFrame, criteria: Criteria) -> pd.DataFrame:
    """One row per (boundary, horizon) of ``labels`` (benign.analysis.theory.atlas_view): the
    crossings, law (i)'s b with its interval, the theorem's and the first step's b, the local
    slopes of log n ("b[10,20]", ...), gamma_n of the theorem's exponent with a log factor; and a
    row per horizon for the flipped samples' own crossings (:data:`SAMPLES`) with the label's b
    minus theirs (interval) and the share the order statistic predicts (``order_b``)."""
    knots = n_knots(runs["n"])
    rows = []
    for horizon in sorted(labels["horizon"].unique()):
        at = labels[labels["horizon"] == horizon]
        for name, column, negate, _, theory_b, _ in BOUNDARIES:
            cr = crossings.crossings(side_labels(at, runs, column, negate))
            first = FIRST_STEP_B if column in ("selects_argmax", "selects_hardmax") else np.nan
            row = {"boundary": name, "label": column, "horizon": int(horizon), "crossings": len(cr),
                   "bracketed": int((cr["censored"] == "").sum()), "theory_b": theory_b, "first_step_b": first}  # fmt: skip
            _laws(row, cr, theory_b, knots)
            rows.append(row)
            if column == "overfits" and "fit_noisy" in at:
                rows.append(_samples_row(at, runs, cr, criteria, int(horizon), theory_b, knots))
    return pd.DataFrame(rows)


def _samples_row(at, runs, label_cr, criteria, horizon, theory_b, knots) -> dict:
    samples = sample_crossings(at, runs)
    row = {"boundary": SAMPLES, "label": "overfits", "horizon": horizon, "crossings": len(samples),
           "bracketed": int((samples["censored"] == "").sum()), "theory_b": theory_b, "first_step_b": np.nan}  # fmt: skip
    _laws(row, samples, theory_b, knots)
    spread = within_line_spread(samples)
    diff, low, high = difference_interval(label_cr, samples)
    row.update(spread=spread, label_minus_samples=diff, label_minus_samples_low=low, label_minus_samples_high=high,
               order_b=order_statistic_b(samples, criteria, spread))  # fmt: skip
    return row
