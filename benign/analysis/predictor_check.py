"""The regime predictor checked off the atlas's grid (docs/regimes.md#the-predictors-check).

Runs of (d, n) cells that no fit reads, with seeds of their own, trained as the predictor says a
checking run must be (its step size, integrator and tolerance, to its horizon), give each seed's
crossing of each boundary, bracketed between two neighbouring norms of the check's grid. Each
bracket is set against the predictor's 95% interval of a new crossing at (d, n)
(benign.analysis.predictor): "inside" where the whole bracket lies in it, "outside" where none
of it does, "straddles" otherwise (the grid cannot tell). Coverage is therefore a pair of
bounds: inside over all, and inside or straddling over all.

The seeds of one cell are independent draws, but whatever the law misses at a (d, n) they miss
together: the units are the cells. Each cell's coverage bounds are its seeds' fractions; the
check's are the mean over the cells inside the atlas's design region, with a Student's t
interval over those cells. Cells outside the design region (where the predictor warns) are
reported apart, never pooled with the others.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.stats import binomtest
from scipy.stats import t as student

from benign.analysis.boundaries import SIDES, side_labels
from benign.analysis.crossings import crossings
from benign.analysis.predictor import OutsideModel, predict
from benign.analysis.theory import Criteria, regimes_at

LEVEL = 0.95
CELL = ["boundary", "horizon", "d", "n"]


def place(lower: float, upper: float, low: float, high: float) -> str:
    """Where a crossing's bracket [lower, upper] lies against an interval [low, high]: "inside",
    "outside" or "straddles". A censored bracket (lower 0 or upper inf) is open on that side."""
    if low <= lower and upper <= high:
        return "inside"
    if upper < low or lower > high:
        return "outside"
    return "straddles"


def schedule_problem(runs: pd.DataFrame, model: pd.DataFrame) -> str:
    """Words naming the first way the check's ``runs`` were not trained as the predictor asks
    (step size, integrator, tolerance), or "" where they were."""
    row = model.iloc[0]
    wanted = {"step_size": row.get("step_size"), "integrator": row.get("integrator"), "flow_tol": row.get("flow_tol")}
    for key, value in wanted.items():
        if value is None or (isinstance(value, float) and math.isnan(value)) or key not in runs:
            continue
        have = set(runs[key].dropna().unique())
        if have != {value} and not (isinstance(value, float) and all(math.isclose(v, value) for v in have)):
            return f"{key} = {sorted(have)} in the check's runs; the predictor's model was fitted at {key} = {value}"
    return ""


def seed_brackets(runs: pd.DataFrame, labels: pd.DataFrame, model: pd.DataFrame) -> pd.DataFrame:
    """One row per (boundary, horizon, d, n, seed) the model predicts: the seed's bracket, the
    predicted crossing and its 95% interval, where the bracket lies against it, and whether
    (d, n) is inside the design region."""
    rows = []
    for name in model["boundary"].unique():
        if name not in SIDES or SIDES[name][0] not in labels:
            continue
        cells = side_labels(labels, runs, *SIDES[name])
        for horizon, at in cells.groupby("horizon"):
            if horizon not in set(model.loc[model["boundary"] == name, "horizon"]):
                continue
            for cr in crossings(at).itertuples():
                try:
                    answer = predict(model, cr.d, cr.n, 1.0, int(horizon))
                except OutsideModel:
                    continue
                if name not in answer["boundaries"]:
                    continue
                star, low, high = answer["boundaries"][name]
                rows.append({"boundary": name, "horizon": int(horizon), "d": int(cr.d), "n": int(cr.n),
                             "seed": int(cr.seed), "lower": cr.lower, "upper": cr.upper, "censored": cr.censored,
                             "predicted": star, "low": low, "high": high,
                             "place": place(cr.lower, cr.upper, low, high),
                             "design": bool(answer["design"]["inside"])})  # fmt: skip
    return pd.DataFrame(rows, columns=[*CELL, "seed", "lower", "upper", "censored", "predicted", "low", "high",
                                       "place", "design"])  # fmt: skip


def cell_coverage(brackets: pd.DataFrame) -> pd.DataFrame:
    """Per (boundary, horizon, d, n): its seeds, how many lie inside, straddle and lie outside,
    the coverage bounds (inside, and inside or straddling, over the seeds) and the design."""
    rows = []
    for key, cell in brackets.groupby(CELL, sort=False):
        counts = cell["place"].value_counts()
        k = len(cell)
        inside, straddles = int(counts.get("inside", 0)), int(counts.get("straddles", 0))
        rows.append({**dict(zip(CELL, key)), "seeds": k, "inside": inside, "straddles": straddles,
                     "outside": k - inside - straddles, "cover_low": inside / k, "cover_high": (inside + straddles) / k,
                     "predicted": float(cell["predicted"].iloc[0]), "low": float(cell["low"].iloc[0]),
                     "high": float(cell["high"].iloc[0]), "design": bool(cell["design"].iloc[0])})  # fmt: skip
    return pd.DataFrame(rows, columns=[*CELL, "seeds", "inside", "straddles", "outside", "cover_low", "cover_high",
                                       "predicted", "low", "high", "design"])  # fmt: skip


def mean_interval(values: np.ndarray, seeds: np.ndarray | None = None) -> tuple[float, float, float]:
    """The mean of the cells' values in [0, 1] and its 95% interval over the cells: Student's t
    on the cells; where they do not differ t has no width, and then the cells are counted as
    all-or-none units where every one is 0 or 1 (Clopper-Pearson on the cells: 7 of 7 gives
    [0.59, 1]), or, where they share another value, the seeds as units (``seeds``: each cell's
    count; Clopper-Pearson on the pooled seeds). NaN ends with fewer than two cells."""
    values = np.asarray(values, float)
    mean = float(np.mean(values)) if len(values) else float("nan")
    if len(values) < 2:
        return mean, float("nan"), float("nan")
    spread = float(np.std(values, ddof=1))
    if spread == 0:
        if mean in (0.0, 1.0) or seeds is None:
            k, total = int(round(mean * len(values))), len(values)
        else:
            total = int(np.sum(seeds))
            k = int(round(float(np.sum(values * np.asarray(seeds, float)))))
        ci = binomtest(k, total).proportion_ci(LEVEL, method="exact")
        return mean, float(ci.low), float(ci.high)
    half = float(student.ppf(0.5 + LEVEL / 2, len(values) - 1) * spread / math.sqrt(len(values)))
    return mean, max(mean - half, 0.0), min(mean + half, 1.0)


def coverage(cells: pd.DataFrame) -> pd.DataFrame:
    """Per (boundary, horizon, region): the cells and seeds, the coverage bounds' means over the
    cells with their t intervals over the cells, and whether the nominal 95% lies in reach."""
    rows = []
    for (name, horizon, inside), group in cells.groupby(["boundary", "horizon", "design"], sort=False):
        seeds = group["seeds"].to_numpy(float)
        low, low_a, low_b = mean_interval(group["cover_low"].to_numpy(float), seeds)
        high, high_a, high_b = mean_interval(group["cover_high"].to_numpy(float), seeds)
        rows.append({"boundary": name, "horizon": int(horizon), "region": "design" if inside else "outside design",
                     "cells": len(group), "seeds": int(group["seeds"].sum()), "inside": int(group["inside"].sum()),
                     "straddles": int(group["straddles"].sum()), "outside": int(group["outside"].sum()),
                     "cover_low": low, "cover_low_low": low_a, "cover_low_high": low_b,
                     "cover_high": high, "cover_high_low": high_a, "cover_high_high": high_b,
                     "verdict": nominal_verdict(low_a, high_b)})  # fmt: skip
    return pd.DataFrame(rows)


def nominal_verdict(lowest: float, highest: float) -> str:
    """What the cells say of the nominal 95%, from the lower bound's interval's low end and the
    upper bound's high end (the widest reading): "below 95%" where even the high end is under
    it, "95% not rejected" otherwise (a weak word: a few cells reject only a coverage far below
    95%, and intervals too wide read so as well), "cannot tell" without intervals."""
    if not (np.isfinite(lowest) and np.isfinite(highest)):
        return "cannot tell"
    return "below 95%" if highest < LEVEL else "95% not rejected"


def sweep_coverage(runs: pd.DataFrame, curves: pd.DataFrame, model: pd.DataFrame, sweep: str,
                regime: dict) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:  # fmt: skip
    """(the check's ok runs, its cells, its coverage per boundary, horizon and region): the runs of
    ``sweep``, which must be trained as the predictor (``model``, the regime-model table) asks, else
    a ValueError naming the value; each seed's crossing at the model's horizons (labels with
    ``regime``'s criteria) against the predictor's interval (:func:`seed_brackets`,
    :func:`cell_coverage`, :func:`coverage`)."""
    ok = runs[(runs["status"] == "ok") & runs["sweeps"].map(lambda names: sweep in set(names))].drop_duplicates(
        "run_id"
    )
    if ok.empty:
        raise ValueError(f"sweep {sweep!r}: no finished run of the predictor's check")
    if problem := schedule_problem(ok, model):
        raise ValueError(f"sweep {sweep!r}: {problem}")
    horizons = sorted(int(h) for h in model["horizon"].unique())
    labels = regimes_at(curves[curves["run_id"].isin(ok["run_id"])], horizons, Criteria(**regime))
    cells = cell_coverage(seed_brackets(ok, labels, model))
    table = coverage(cells)
    return ok, cells, table
