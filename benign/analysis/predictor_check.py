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

Where the predicted interval is narrower than a bracket every seed straddles it and coverage
cannot be told, so the check also scores each crossing: z = (ln crossing - predicted ln
||mu||*) / the predicted sd of a new crossing, a bracketed crossing read at its log-midpoint with
its uniform variance across the bracket (width^2 / 12 in ln) added to the sd's square. Bias is
the mean z over the cells (seeds averaged within a cell first), with Student's t over the cells;
calibration is the sd of a seed's z (1 where the predicted sd is right), from the analysis of
variance between and within the cells, with a chi-square interval. The fit's own error at the
check's cells is shared by all of them: it reads as bias (the prediction is off there), not as
spread. Whether a "no bias" is worth anything is the test's power against a bias of 0.1 in ln
||mu||* on the check's own design, computed by simulation (:func:`bias_power`); below 80% the
words are "cannot tell". So for the spread: a spread whose interval holds 1 says nothing unless the
check could have seen a miss, and where the brackets are wider than the predicted sd their uniform
variance is most of z's and the seeds of a cell share a bracket, so it can barely see one. Its power
against a true sd twice the predicted one is simulated on the check's design
(:func:`calibration_power`); the words are "spread > 1" (the predicted sd too small) or "spread <
1" where the interval excludes 1, else "cannot tell" with that power, never "calibrated".
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.stats import binomtest, chi2
from scipy.stats import t as student

from benign.analysis.boundaries import SIDES, side_labels
from benign.analysis.crossings import crossings
from benign.analysis.equivalence import verdict
from benign.analysis.predictor import OutsideModel, _boundary, predict
from benign.analysis.theory import Criteria, ok_runs_of, regimes_at

LEVEL = 0.95
CELL = ["boundary", "horizon", "d", "n"]
DELTA = 0.1  # the bias in ln ||mu||* the check must be able to see
POWER = 0.8  # the power against DELTA below which "no bias detected" is not earned
SIMULATIONS = 2000
FACTOR = 2.0  # the miss of the predicted sd the calibration must be able to see: the true sd twice it


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
    predicted crossing, the sd of a new crossing in ln ||mu||* (the law's variance at (d, n) plus
    sigma^2) and its 95% interval, where the bracket lies against it, and whether (d, n) is
    inside the design region."""
    rows = []
    for name in model["boundary"].unique():
        if name not in SIDES or SIDES[name][0] not in labels:
            continue
        cells = side_labels(labels, runs, *SIDES[name])
        for horizon, at in cells.groupby("horizon"):
            fitted = model[(model["boundary"] == name) & (model["horizon"] == horizon)]
            if fitted.empty:
                continue
            for cr in crossings(at).itertuples():
                try:
                    answer = predict(model, cr.d, cr.n, 1.0, int(horizon))
                except OutsideModel:
                    continue
                if name not in answer["boundaries"]:
                    continue
                star, low, high = answer["boundaries"][name]
                *_, sigma, var = _boundary(fitted.iloc[0], cr.d, cr.n)
                rows.append({"boundary": name, "horizon": int(horizon), "d": int(cr.d), "n": int(cr.n),
                             "seed": int(cr.seed), "lower": cr.lower, "upper": cr.upper, "censored": cr.censored,
                             "predicted": star, "sd": math.sqrt(var + sigma**2), "low": low, "high": high,
                             "place": place(cr.lower, cr.upper, low, high),
                             "design": bool(answer["design"]["inside"])})  # fmt: skip
    return pd.DataFrame(rows, columns=[*CELL, "seed", "lower", "upper", "censored", "predicted", "sd", "low",
                                       "high", "place", "design"])  # fmt: skip


def log_bracket(lower, upper) -> tuple[np.ndarray, np.ndarray]:
    """(log-midpoint, width) in ln ||mu|| of brackets [lower, upper]: where a crossing known only
    to its bracket is read, and how far it may lie from there. NaN where the bracket is open."""
    lower, upper = np.asarray(lower, float), np.asarray(upper, float)
    closed = (lower > 0) & np.isfinite(upper)
    ln_lower, ln_upper = np.log(np.where(closed, lower, 1.0)), np.log(np.where(closed, upper, 1.0))
    return np.where(closed, (ln_lower + ln_upper) / 2, np.nan), np.where(closed, ln_upper - ln_lower, np.nan)


def seed_z(lower, upper, predicted, sd) -> np.ndarray:
    """The standardised residual of a crossing from the prediction: (ln crossing - ln
    ``predicted``) / ``sd`` (the predicted sd of a new crossing, in ln). A crossing known to its
    bracket [lower, upper] is read at the log-midpoint, and the bracket's uniform variance
    (width^2 / 12) is added to sd^2: the crossing lies anywhere across it. NaN where the bracket
    is open (censored): no midpoint to read."""
    mid, width = log_bracket(lower, upper)
    return (mid - np.log(np.asarray(predicted, float))) / np.sqrt(np.asarray(sd, float) ** 2 + width**2 / 12)


def cell_coverage(brackets: pd.DataFrame) -> pd.DataFrame:
    """Per (boundary, horizon, d, n): its seeds, how many lie inside, straddle and lie outside,
    the coverage bounds (inside, and inside or straddling, over the seeds), the design, and its
    scores: the seeds with a closed bracket (``scored``), the mean of their z (:func:`seed_z`)
    and the spread of their z about it (population sd, ``z_within``), the mean residual in ln
    ||mu|| (``residual``), the predicted sd of a new crossing (``sd``) and the median bracket
    width in ln (``width``)."""
    rows = []
    for key, cell in brackets.groupby(CELL, sort=False):
        counts = cell["place"].value_counts()
        k = len(cell)
        inside, straddles = int(counts.get("inside", 0)), int(counts.get("straddles", 0))
        z = seed_z(cell["lower"], cell["upper"], cell["predicted"], cell["sd"])
        mid, width = log_bracket(cell["lower"], cell["upper"])
        scored = np.isfinite(z)
        residual = mid[scored] - np.log(cell["predicted"].to_numpy(float)[scored])
        rows.append({**dict(zip(CELL, key)), "seeds": k, "inside": inside, "straddles": straddles,
                     "outside": k - inside - straddles, "cover_low": inside / k, "cover_high": (inside + straddles) / k,
                     "predicted": float(cell["predicted"].iloc[0]), "low": float(cell["low"].iloc[0]),
                     "high": float(cell["high"].iloc[0]), "design": bool(cell["design"].iloc[0]),
                     "scored": int(scored.sum()), "z": float(np.mean(z[scored])) if scored.any() else np.nan,
                     "z_within": float(np.std(z[scored])) if scored.any() else np.nan,
                     "residual": float(np.mean(residual)) if scored.any() else np.nan,
                     "sd": float(cell["sd"].iloc[0]),
                     "width": float(np.median(width[scored])) if scored.any() else np.nan})  # fmt: skip
    return pd.DataFrame(rows, columns=[*CELL, "seeds", "inside", "straddles", "outside", "cover_low", "cover_high",
                                       "predicted", "low", "high", "design", "scored", "z", "z_within", "residual",
                                       "sd", "width"])  # fmt: skip


def bias_test(values, axis: int = -1) -> tuple:
    """(mean, low, high, p) of ``values`` (the cells' z, one per cell, along ``axis``): the mean,
    its 95% Student's t interval over the cells and the two-sided p of a zero mean. The cells are
    the units: each shares whatever the law misses at its (d, n). NaN with fewer than two cells
    or no spread."""
    values = np.asarray(values, float)
    cells = values.shape[axis]
    mean = np.mean(values, axis=axis) if cells else np.full(np.delete(values.shape, axis), np.nan)
    if cells < 2:
        nan = np.full_like(np.asarray(mean, float), np.nan)
        return mean, nan, nan, nan
    error = np.std(values, axis=axis, ddof=1) / math.sqrt(cells)
    with np.errstate(divide="ignore", invalid="ignore"):
        error = np.where(error > 0, error, np.nan)
        p = 2 * student.sf(np.abs(mean) / error, cells - 1)
    half = student.ppf(0.5 + LEVEL / 2, cells - 1) * error
    return mean, mean - half, mean + half, p


def calibration(cells: pd.DataFrame) -> tuple[float, float, float]:
    """(sd of a seed's z, low, high): 1 where the predicted sd of a new crossing is right, above
    where the crossings scatter more than predicted. From the one-way analysis of variance of the
    seeds' z over the scored cells (``scored``, ``z``, ``z_within`` of :func:`cell_coverage`):
    the between-cell and within-cell mean squares give the variance of a seed's z whatever share
    of it the seeds of a cell have in common; its 95% interval is chi-square on Satterthwaite's
    degrees of freedom (the cells' less one where the seeds of a cell agree, more where they
    scatter). NaN with fewer than two cells."""
    cells = cells[cells["scored"] > 0]
    k, z, within = (cells[c].to_numpy(float) for c in ("scored", "z", "z_within"))
    return tuple(float(v) for v in calibration_arrays(k, z, within))


def calibration_arrays(k, z, within) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`calibration` on arrays: ``k`` the seeds scored per cell (cells,), ``z`` and
    ``within`` the cells' mean z and population sd of z (..., cells), any leading axes (the
    simulations of :func:`calibration_power`) carried through. (sd, low, high), each of the
    leading shape: NaN with fewer than two cells; sd 0 and no interval where z does not vary."""
    k = np.asarray(k, float)
    z, within = np.asarray(z, float), np.asarray(within, float)
    groups, total = len(k), float(np.sum(k))
    if groups < 2:
        nan = np.full(z.shape[:-1], np.nan)
        return nan, nan, nan.copy()
    grand = np.sum(k * z, axis=-1, keepdims=True) / total
    between = np.sum(k * (z - grand) ** 2, axis=-1) / (groups - 1)
    inside = np.sum(k * within**2, axis=-1) / (total - groups) if total > groups else np.zeros_like(between)
    k0 = (total - float(np.sum(k**2)) / total) / (groups - 1)  # seeds per cell, the unbalanced design's
    parts = np.stack([between / k0, inside * (k0 - 1) / k0])
    dofs = np.array([groups - 1, max(total - groups, 1)], float).reshape((2,) + (1,) * between.ndim)
    variance = parts.sum(axis=0)
    varies = variance > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        dof = np.where(varies, variance**2 / np.sum(parts**2 / dofs, axis=0), np.nan)
        low, high = (np.where(varies, np.sqrt(variance * dof / chi2.ppf(q, dof)), np.nan)
                     for q in (0.5 + LEVEL / 2, 0.5 - LEVEL / 2))  # fmt: skip
    return np.sqrt(np.maximum(variance, 0.0)), low, high


def simulated_seed_z(design: pd.DataFrame, delta: float, sims: int, rng: np.random.Generator,
                     shared: float = 1.0, factor: float = 1.0) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """(z, mask): the seeds' z on simulated checks of ``design`` (one row per cell: ``sd``, the
    predicted sd of a new crossing in ln; ``width``, the bracket width in ln, 0 for an exact
    crossing; ``scored``, its seeds), (sims, cells, most seeds), and which of them are a cell's
    seeds, (cells, most seeds). Each seed's ln crossing lies off the prediction by ``delta`` plus
    N(0, (``factor`` sd)^2) (``factor`` 1: the predicted sd is right), of which the seeds of a
    cell share the fraction ``shared`` (the fitted model's sigma does not say how much), bracketed
    on a grid of that width at a random offset per cell (the seeds of a cell on one grid, as the
    check's are) and scored as the check does (:func:`seed_z`: the log-midpoint over the
    predicted sd with the bracket's uniform variance added)."""
    sd, width = design["sd"].to_numpy(float)[:, None], design["width"].to_numpy(float)[:, None]
    seeds = design["scored"].to_numpy(int)
    cells, most = len(sd), int(seeds.max()) if len(seeds) else 0
    draws = (delta + factor * math.sqrt(shared) * sd * rng.standard_normal((sims, cells, 1))
             + factor * math.sqrt(1 - shared) * sd * rng.standard_normal((sims, cells, most)))  # fmt: skip
    offset = rng.uniform(size=(sims, cells, 1)) * width
    with np.errstate(divide="ignore", invalid="ignore"):
        mid = np.where(width > 0, (np.floor((draws - offset) / width) + 0.5) * width + offset, draws)
    z = mid / np.sqrt(sd**2 + width**2 / 12)
    return z, np.arange(most)[None, :] < seeds[:, None]


def simulated_cell_z(design: pd.DataFrame, delta: float, sims: int, rng: np.random.Generator,
                     shared: float = 1.0) -> np.ndarray:  # fmt: skip
    """(sims, cells) of the cells' z on simulated checks of ``design`` (:func:`simulated_seed_z`,
    the predicted sd right): each seed's ln crossing off the prediction by ``delta``, the seeds of
    a cell sharing the fraction ``shared`` of its deviation (1, all of it, gives the bias test the
    least power), its seeds' z averaged as the check does."""
    z, mask = simulated_seed_z(design, delta, sims, rng, shared)
    return np.sum(z * mask, axis=-1) / design["scored"].to_numpy(int)


def bias_power(design: pd.DataFrame, delta: float = DELTA, shared: float = 1.0, sims: int = SIMULATIONS,
               seed: int = 0) -> float:  # fmt: skip
    """The rate at which :func:`bias_test` rejects a zero bias at 5% on simulated checks of
    ``design`` (:func:`simulated_cell_z`: its cells, seeds, bracket widths and predicted sds)
    whose crossings lie ``delta`` in ln ||mu||* off the prediction: the check's power against
    that bias (its size at ``delta`` 0). 0 with fewer than two scored cells."""
    design = design[design["scored"] > 0]
    if len(design) < 2:
        return 0.0
    p = bias_test(simulated_cell_z(design, delta, sims, np.random.default_rng(seed), shared))[3]
    return float(np.mean(np.nan_to_num(p, nan=1.0) < 1 - LEVEL))


def calibration_power(design: pd.DataFrame, factor: float = FACTOR, shared: float = 1.0, sims: int = SIMULATIONS,
                      seed: int = 0) -> float:  # fmt: skip
    """The rate at which :func:`calibration`'s 95% interval lies wholly above 1 on simulated checks
    of ``design`` (its cells, seeds, bracket widths and predicted sds, as :func:`bias_power`
    takes) whose crossings scatter ``factor`` times the predicted sd about the prediction (no
    bias), bracketed and scored as the check does (:func:`simulated_seed_z`): the check's power
    to see that the predicted sd is ``factor`` times too small (its one-sided size, about 2.5%,
    at ``factor`` 1). Where the brackets are wider than the sd their uniform variance dominates
    z's and the seeds of a cell share a bracket, so the spread barely moves. 0 with fewer than two
    scored cells."""
    design = design[design["scored"] > 0]
    if len(design) < 2:
        return 0.0
    z, mask = simulated_seed_z(design, 0.0, sims, np.random.default_rng(seed), shared, factor)
    k = design["scored"].to_numpy(float)
    mean = np.sum(z * mask, axis=-1) / k
    within = np.sqrt(np.sum(mask * (z - mean[..., None]) ** 2, axis=-1) / k)
    low = calibration_arrays(k, mean, within)[1]
    return float(np.mean(np.nan_to_num(low, nan=0.0) > 1))


def spread_verdict(low: float, high: float, power: float, factor: float = FACTOR) -> str:
    """Words for the spread of z, from its 95% interval (:func:`calibration`): "spread > 1: the
    predicted sd too small" where the interval lies above 1, "spread < 1: the predicted sd too
    large" where it lies below, else "cannot tell (power X% against an sd off by 2)", with the
    check's power (:func:`calibration_power`) against a predicted sd ``factor`` times too small.
    Never "calibrated": an interval holding 1 is no evidence the sd is right where the power is
    low."""
    if np.isfinite(low) and low > 1:
        return "spread > 1: the predicted sd too small"
    if np.isfinite(high) and high < 1:
        return "spread < 1: the predicted sd too large"
    return f"cannot tell (power {power:.0%} against an sd off by {factor:g})"


def bias_verdict(low: float, high: float, power: float, cells: int) -> str:
    """Words for the bias, from its 95% interval in ln ||mu||* against the margin :data:`DELTA`,
    symmetric as the project's words are (benign.analysis.equivalence.verdict): "within ±0.1"
    where the whole interval lies inside it, "biased beyond 0.1" where it lies wholly outside,
    "cannot tell (power X%)" otherwise, with the power of the design against a bias of
    :data:`DELTA`; and no word with fewer than 3 cells (a t interval on one degree of freedom)."""
    if cells < 3:
        return f"cannot tell ({cells} cells)"
    words = verdict(low, high, 0.0, DELTA)
    if words == "agrees":
        return f"within ±{DELTA:g}"
    if words == "departs":
        return f"biased beyond {DELTA:g}"
    return f"cannot tell (power {power:.0%})"


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
    cells with their t intervals over the cells, and whether the nominal 95% lies in reach; the
    seeds scored, the bias (mean z over the scored cells, ``bias_z``, and the mean residual in ln,
    ``bias_ln``, with their t intervals; ``bias_p``), the sd of a seed's z with its interval
    (``spread_z``), the power against a bias of :data:`DELTA` (``power``) and the bias's words;
    the power of the spread's interval against a predicted sd :data:`FACTOR` times too small
    (``calibration_power``) and the spread's words (``spread_verdict``)."""
    rows = []
    for (name, horizon, inside), group in cells.groupby(["boundary", "horizon", "design"], sort=False):
        seeds = group["seeds"].to_numpy(float)
        low, low_a, low_b = mean_interval(group["cover_low"].to_numpy(float), seeds)
        high, high_a, high_b = mean_interval(group["cover_high"].to_numpy(float), seeds)
        scored = group[group["scored"] > 0]
        bias, bias_a, bias_b, p = (float(v) for v in bias_test(scored["z"].to_numpy(float)))
        shift, shift_a, shift_b, _ = (float(v) for v in bias_test(scored["residual"].to_numpy(float)))
        spread, spread_a, spread_b = calibration(scored)
        power = bias_power(scored)
        spread_power = calibration_power(scored)
        rows.append({"boundary": name, "horizon": int(horizon), "region": "design" if inside else "outside design",
                     "cells": len(group), "seeds": int(group["seeds"].sum()), "inside": int(group["inside"].sum()),
                     "straddles": int(group["straddles"].sum()), "outside": int(group["outside"].sum()),
                     "cover_low": low, "cover_low_low": low_a, "cover_low_high": low_b,
                     "cover_high": high, "cover_high_low": high_a, "cover_high_high": high_b,
                     "verdict": nominal_verdict(low_b, high_b), "scored": int(scored["scored"].sum()),
                     "bias_z": bias, "bias_z_low": bias_a, "bias_z_high": bias_b, "bias_p": p,
                     "bias_ln": shift, "bias_ln_low": shift_a, "bias_ln_high": shift_b,
                     "spread_z": spread, "spread_z_low": spread_a, "spread_z_high": spread_b,
                     "power": power, "bias_verdict": bias_verdict(shift_a, shift_b, power, len(scored)),
                     "calibration_power": spread_power,
                     "spread_verdict": spread_verdict(spread_a, spread_b, spread_power)})  # fmt: skip
    return pd.DataFrame(rows)


def nominal_verdict(inside_high: float, straddling_high: float) -> str:
    """What the cells say of the nominal 95%, from the high ends of the two bounds' intervals
    (inside only, and straddling counted): "below 95%" where even the straddling-counted end is
    under it; "95% not rejected" only where the inside-only end reaches it too, so the straddling
    seeds do not decide it (still a weak word: a few cells reject only a coverage far below 95%);
    "cannot tell (straddling)" where the straddling seeds would decide it; "cannot tell" without
    intervals."""
    if not (np.isfinite(inside_high) and np.isfinite(straddling_high)):
        return "cannot tell"
    if straddling_high < LEVEL:
        return "below 95%"
    return "95% not rejected" if inside_high >= LEVEL else "cannot tell (straddling)"


def sweep_coverage(runs: pd.DataFrame, curves: pd.DataFrame, model: pd.DataFrame, sweep: str,
                regime: dict) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:  # fmt: skip
    """(the check's ok runs, its cells, its coverage per boundary, horizon and region): the runs of
    ``sweep``, which must be trained as the predictor (``model``, the regime-model table) asks, else
    a ValueError naming the value; each seed's crossing at the model's horizons (labels with
    ``regime``'s criteria) against the predictor's interval (:func:`seed_brackets`,
    :func:`cell_coverage`, :func:`coverage`)."""
    ok = ok_runs_of(runs, [sweep])
    if ok.empty:
        raise ValueError(f"sweep {sweep!r}: no finished run of the predictor's check")
    if problem := schedule_problem(ok, model):
        raise ValueError(f"sweep {sweep!r}: {problem}")
    horizons = sorted(int(h) for h in model["horizon"].unique())
    labels = regimes_at(curves[curves["run_id"].isin(ok["run_id"])], horizons, Criteria(**regime))
    cells = cell_coverage(seed_brackets(ok, labels, model))
    table = coverage(cells)
    return ok, cells, table
