"""Do the crossings move? The same lines compared at two step sizes, or at two horizons
(docs/regimes.md#step-convergence, docs/regimes.md#horizons).

Both comparisons are paired: the runs of a (d, n, seed) line share their data draw whatever
the step or the horizon, so each line gives its crossing twice (benign.analysis.crossings), on
the norms both have. A crossing is known as a bracket of neighbouring norms.

- The step: a crossing has moved beyond its own interval where its two brackets are disjoint
  (they do not even touch). A d passes where no crossing of the check did. With brackets of a
  factor sqrt(2) per seed a smaller move can go unseen, so the check also refits law (i) on the
  check's crossings at both steps and gives the change of its exponents, with a delete-one-line
  jackknife interval over the (d, n) lines: what a move would do to the claims.
- The horizons: the shift of a crossing is the change of its bracket's geometric midpoint, in
  ln ||mu||, where both are closed; the seeds of a (d, n) line shift together, so the shifts are
  averaged per line, and the lines are the units (Student's t on G - 1). Per decade of time, a
  boundary has settled where the 95% interval of its drift lies within plus or minus the
  resolution its lines' staggered brackets give a crossing (an equivalence margin: how finely a
  crossing is known); "moves" where the interval lies wholly outside; "cannot tell" otherwise.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.stats import t as student

from benign.analysis import crossings as crossing_fits
from benign.analysis.boundaries import BOUNDARIES, side_labels
from benign.analysis.crossings import LINE, crossings, line_resolution

LEVEL = 0.95


def paired_crossings(base: pd.DataFrame, other: pd.DataFrame, side: str = "side") -> pd.DataFrame:
    """One row per (d, n, seed) line of both frames (columns d, n, seed, signal_norm and the
    boolean ``side``): its crossing in each (``lower``/``upper`` and ``lower_other``/``upper_other``)
    on the norms both have at that line, ``moved`` where the two brackets are disjoint (they do
    not even touch), and ``shift`` = ln of the other midpoint over the base one (NaN unless both
    brackets are closed)."""
    key = lambda f: f.assign(norm=f["signal_norm"].round(6))  # noqa: E731
    base, other = key(base), key(other)
    shared = base[LINE + ["norm"]].merge(other[LINE + ["norm"]].drop_duplicates()).drop_duplicates()
    pick = lambda f: f.merge(shared, on=LINE + ["norm"])  # noqa: E731
    a, b = crossings(pick(base), side), crossings(pick(other), side)
    pairs = a.merge(b[LINE + ["lower", "upper", "censored"]], on=LINE, suffixes=("", "_other"))
    if pairs.empty:
        return pairs.assign(shift=pd.Series(dtype=float), moved=pd.Series(dtype=bool))
    pairs = pairs.astype({k: float for k in ("lower", "upper", "lower_other", "upper_other")})
    closed = lambda lo, hi: (lo > 0) & np.isfinite(hi)  # noqa: E731
    both = closed(pairs["lower"], pairs["upper"]) & closed(pairs["lower_other"], pairs["upper_other"])
    mid = lambda lo, hi: 0.5 * (np.log(lo.where(both, 1.0)) + np.log(hi.where(both, 1.0)))  # noqa: E731
    shift = mid(pairs["lower_other"], pairs["upper_other"]) - mid(pairs["lower"], pairs["upper"])
    moved = (pairs["upper_other"] < pairs["lower"]) | (pairs["upper"] < pairs["lower_other"])
    return pairs.assign(shift=shift.where(both), moved=moved)


def drift(pairs: pd.DataFrame, decades: float) -> dict:
    """The drift of a group of pairs (:func:`paired_crossings`) per decade of time: the shifts
    averaged per (d, n) line, their mean over the lines per ``decades``, with its 95% interval
    (Student's t on G - 1 lines), the margin (the lines' resolution) and the words "settled",
    "moves" or "cannot tell" (module docstring); under 3 lines with a closed pair: cannot tell."""
    lines = pairs.dropna(subset=["shift"]).groupby(["d", "n"])["shift"].mean().to_numpy(float) / decades
    out = {"pairs": len(pairs), "lines": len(lines), "moved": int(pairs["moved"].sum()), "drift": np.nan,
           "drift_low": np.nan, "drift_high": np.nan, "margin": line_resolution(pairs), "verdict": "cannot tell"}  # fmt: skip
    if len(lines) < 3:
        return out
    mean, se = float(lines.mean()), float(lines.std(ddof=1) / math.sqrt(len(lines)))
    half = float(student.ppf(0.5 + LEVEL / 2, len(lines) - 1)) * se
    margin = out["margin"]
    out.update(drift=mean, drift_low=mean - half, drift_high=mean + half)
    if -margin <= mean - half and mean + half <= margin:
        out["verdict"] = "settled"
    elif mean - half > margin or mean + half < -margin:
        out["verdict"] = "moves"
    return out


def step_convergence(runs: pd.DataFrame, labels: pd.DataFrame, checked: pd.DataFrame, checked_labels: pd.DataFrame,
                     horizon: int, factor: int) -> pd.DataFrame:  # fmt: skip
    """One row per boundary and d: the atlas's crossings at ``horizon`` (``runs``, ``labels``)
    against those of the same lines and seeds at the step divided by ``factor`` read at
    ``factor`` times ``horizon`` steps (``checked``, ``checked_labels``): how many crossings were
    compared, closed, changed bracket and moved beyond their own, and the verdict ("converged"
    where none moved beyond its own bracket, "moves" otherwise); on every row of a boundary, the
    change of law (i)'s a and b at the finer step (:func:`exponent_change`). Empty where nothing
    was checked."""
    rows = []
    if checked.empty:
        return pd.DataFrame(rows)
    base_at = labels[labels["horizon"] == horizon]
    other_at = checked_labels[checked_labels["horizon"] == horizon * factor]
    for name, column, negate, *_ in BOUNDARIES:
        pairs = paired_crossings(side_labels(base_at, runs, column, negate),
                                 side_labels(other_at, checked, column, negate))  # fmt: skip
        change = {**exponent_change(pairs), **paired_shift(pairs)}
        for d, group in pairs.groupby("d"):
            closed = group["shift"].notna()
            rows.append({"boundary": name, "d": float(d), "horizon": int(horizon), "factor": int(factor),
                         "lines": group[["n"]].drop_duplicates().shape[0], "pairs": len(group),
                         "closed_pairs": int(closed.sum()), "changed": int((group.loc[closed, "shift"] != 0).sum()),
                         "moved": int(group["moved"].sum()), "largest_shift": float(group["shift"].abs().max()),
                         "verdict": "moves" if group["moved"].any() else "converged", **change})  # fmt: skip
    return pd.DataFrame(rows)


def paired_shift(pairs: pd.DataFrame) -> dict:
    """The step check as a paired equivalence test: the shifts of the closed pairs (ln of the
    finer step's bracket midpoint over the base's) averaged per (d, n) line, their mean over the lines with its 95% interval (Student's t on G - 1), and the words
    against the lines' resolution ("equivalent" where the interval lies within it, "moves" where
    it lies outside, "cannot tell" otherwise). Where every line's mean shift is the same (every
    closed pair kept its bracket, say) the interval is degenerate ([0, 0]): ``shift_grid`` then
    gives what the grid resolves, the
    half-width a mean over the lines of shifts known to a uniform error of one resolution would
    have (t on G - 1 times resolution / sqrt(12 G))."""
    judged = drift(pairs, 1.0)
    words = {"settled": "equivalent", "moves": "moves", "cannot tell": "cannot tell"}[judged["verdict"]]
    lines, margin = judged["lines"], judged["margin"]
    degenerate = np.isfinite(judged["drift"]) and judged["drift_low"] == judged["drift_high"]
    grid = (float(student.ppf(0.5 + LEVEL / 2, lines - 1)) * margin / math.sqrt(12 * lines)
            if degenerate and lines > 1 else np.nan)  # fmt: skip
    return {"shift": judged["drift"], "shift_low": judged["drift_low"], "shift_high": judged["drift_high"],
            "shift_lines": lines, "shift_margin": margin, "shift_verdict": words, "shift_grid": grid}  # fmt: skip


def exponent_change(pairs: pd.DataFrame) -> dict:
    """The change of law (i)'s a and b from the base crossings of ``pairs`` to the finer step's,
    each fitted on the same lines and seeds, with 95% intervals from the delete-one-(d, n)-line
    jackknife of the difference (Student's t on G - 1): NaN where a fit is impossible."""
    base = pairs[LINE + ["lower", "upper", "censored", "changes", "runs"]]
    other = pairs[LINE + ["changes", "runs"]].assign(lower=pairs["lower_other"], upper=pairs["upper_other"],
                                                     censored=pairs["censored_other"])  # fmt: skip
    out = {f"{t}_change{s}": np.nan for t in ("a", "b") for s in ("", "_low", "_high")}
    groups = pairs.groupby(["d", "n"]).ngroup().to_numpy()
    if len(np.unique(groups)) < 3:
        return out

    def difference(keep) -> dict:
        fits = [crossing_fits.fit(f[keep], "power", intervals=False) for f in (base, other)]
        return {t: fits[1].estimates[t] - fits[0].estimates[t] if all(f and t in f.estimates for f in fits) else np.nan
                for t in ("a", "b")}  # fmt: skip

    whole = difference(np.ones(len(pairs), bool))
    refits = [difference(groups != g) for g in np.unique(groups)]
    quantile = float(student.ppf(0.5 + LEVEL / 2, len(refits) - 1))
    for t in ("a", "b"):
        values = np.array([r[t] for r in refits], dtype=float)
        if not np.isfinite(whole[t]) or not np.isfinite(values).all():
            continue
        se = math.sqrt((len(values) - 1) / len(values) * float(((values - values.mean()) ** 2).sum()))
        out.update({f"{t}_change": whole[t], f"{t}_change_low": whole[t] - quantile * se,
                    f"{t}_change_high": whole[t] + quantile * se})  # fmt: skip
    return out


def left_out(table: pd.DataFrame) -> dict[str, list[float]]:
    """{boundary: the d where a crossing of the step check moved beyond its own bracket}: the
    fits leave them out (docs/regimes.md#step-convergence)."""
    if table.empty:
        return {}
    bad = table[table["verdict"] != "converged"]
    return {name: sorted(group["d"].tolist()) for name, group in bad.groupby("boundary")}
