"""Do the crossings move? The same lines compared at two step sizes, or at two horizons
(docs/regimes.md#step-convergence, docs/regimes.md#horizons).

Both comparisons are paired: the runs of a (d, n, seed) line share their data draw whatever
the step or the horizon, so each line gives its crossing twice (benign.analysis.crossings), on
the norms both have. A crossing is known as a bracket of neighbouring norms; the shift of a
pair is the difference of its brackets' geometric midpoints, in log ||mu||, where both are
closed. A group of pairs (one d of one boundary, or one boundary between two horizons) has
moved less than its crossings' own resolution when the 95% interval of its mean shift (Student's
t over the pairs, which are independent draws) lies within plus or minus the resolution that its
lines' staggered brackets give a crossing (benign.analysis.crossings.line_resolution), in log
||mu||: an equivalence test whose margin is how finely the crossings are known.
Words: "converged" (or "settled") there; "moves" where the interval lies wholly outside that
margin; "cannot tell" otherwise, and where fewer than two pairs are closed in both.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.stats import t as student

from benign.analysis.boundaries import BOUNDARIES, side_labels
from benign.analysis.crossings import LINE, crossings, line_resolution

LEVEL = 0.95


def paired_crossings(base: pd.DataFrame, other: pd.DataFrame, side: str = "side") -> pd.DataFrame:
    """One row per (d, n, seed) line of both frames (columns d, n, seed, signal_norm and the
    boolean ``side``): its crossing in each (``lower``/``upper`` and ``lower_other``/``upper_other``)
    on the norms both have at that line, ``moved`` where the two brackets are disjoint (they do
    not even touch), and ``shift`` = log of the other midpoint over the base one (NaN unless both
    brackets are closed)."""
    key = lambda f: f.assign(norm=f["signal_norm"].round(6))  # noqa: E731
    base, other = key(base), key(other)
    shared = base[LINE + ["norm"]].merge(other[LINE + ["norm"]].drop_duplicates()).drop_duplicates()
    pick = lambda f: f.merge(shared, on=LINE + ["norm"])  # noqa: E731
    a, b = crossings(pick(base), side), crossings(pick(other), side)
    pairs = a.merge(b[LINE + ["lower", "upper"]], on=LINE, suffixes=("", "_other"))
    if pairs.empty:
        return pairs.assign(shift=pd.Series(dtype=float), width=pd.Series(dtype=float), moved=pd.Series(dtype=bool))
    pairs = pairs.astype({k: float for k in ("lower", "upper", "lower_other", "upper_other")})
    closed = lambda lo, hi: (lo > 0) & np.isfinite(hi)  # noqa: E731
    both = closed(pairs["lower"], pairs["upper"]) & closed(pairs["lower_other"], pairs["upper_other"])
    mid = lambda lo, hi: 0.5 * (np.log(lo.where(both, 1.0)) + np.log(hi.where(both, 1.0)))  # noqa: E731
    shift = mid(pairs["lower_other"], pairs["upper_other"]) - mid(pairs["lower"], pairs["upper"])
    moved = (pairs["upper_other"] < pairs["lower"]) | (pairs["upper"] < pairs["lower_other"])
    width = np.log(pairs["upper"].where(both, np.nan) / pairs["lower"].where(both, np.nan))
    return pairs.assign(shift=shift.where(both), width=width, moved=moved)


def judge(pairs: pd.DataFrame, settled: str = "converged") -> dict:
    """The words of a group of pairs (:func:`paired_crossings`): its mean shift with the 95%
    interval over the pairs closed in both, the margin (the lines' resolution) and ``settled``,
    "moves" or "cannot tell" (module docstring)."""
    shifts = pairs["shift"].dropna().to_numpy(float)
    out = {"pairs": len(pairs), "closed_pairs": len(shifts), "moved": int(pairs["moved"].sum()), "shift": np.nan,
           "shift_low": np.nan, "shift_high": np.nan, "margin": np.nan, "verdict": "cannot tell"}  # fmt: skip
    if len(shifts) < 2:
        return out
    mean, se = float(shifts.mean()), float(shifts.std(ddof=1) / math.sqrt(len(shifts)))
    half = float(student.ppf(0.5 + LEVEL / 2, len(shifts) - 1)) * se
    margin = line_resolution(pairs)
    out.update(shift=mean, shift_low=mean - half, shift_high=mean + half, margin=margin)
    if -margin <= mean - half and mean + half <= margin:
        out["verdict"] = settled
    elif mean - half > margin or mean + half < -margin:
        out["verdict"] = "moves"
    return out


def step_convergence(runs: pd.DataFrame, labels: pd.DataFrame, checked: pd.DataFrame, checked_labels: pd.DataFrame,
                     horizon: int, factor: int) -> pd.DataFrame:  # fmt: skip
    """One row per boundary and d: the atlas's crossings at ``horizon`` (``runs``, ``labels``)
    against those of the same lines and seeds at the step divided by ``factor`` read at
    ``factor`` times ``horizon`` steps (``checked``, ``checked_labels``), judged by :func:`judge`.
    Empty where nothing was checked."""
    rows = []
    if checked.empty:
        return pd.DataFrame(rows)
    base_at = labels[labels["horizon"] == horizon]
    other_at = checked_labels[checked_labels["horizon"] == horizon * factor]
    for name, column, negate, *_ in BOUNDARIES:
        pairs = paired_crossings(side_labels(base_at, runs, column, negate),
                                 side_labels(other_at, checked, column, negate))  # fmt: skip
        for d, group in pairs.groupby("d"):
            rows.append({"boundary": name, "d": float(d), "horizon": int(horizon), "factor": int(factor),
                         "lines": group[["n", "seed"]].drop_duplicates().shape[0], **judge(group)})  # fmt: skip
    return pd.DataFrame(rows)


def left_out(table: pd.DataFrame) -> dict[str, list[float]]:
    """{boundary: the d whose step check did not find its crossings converged}: the fits leave
    them out (docs/regimes.md#step-convergence)."""
    if table.empty:
        return {}
    bad = table[table["verdict"] != "converged"]
    return {name: sorted(group["d"].tolist()) for name, group in bad.groupby("boundary")}
