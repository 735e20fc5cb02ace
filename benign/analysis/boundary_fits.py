"""The atlas's boundaries fitted at each horizon (docs/regimes.md#atlas): per boundary and horizon,
the crossings, the three laws and the base rate with their held-out scores, the interaction, the
decades' slopes, the words each interval can carry, the run-level steepness; between horizons the
drift of the crossings; the exponent of d extrapolated in 1 / ln(horizon); and law (i) with its
covariance, the model the regime predictor reads. benign.tables.boundaries words and writes them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import t as student

from benign.analysis import boundaries, crossings
from benign.analysis import convergence as convergence_mod
from benign.analysis.boundaries import BOUNDARIES, side_labels
from benign.analysis.equivalence import verdict

COMPARED = ("power", "theory", "decades", "none")  # the laws compared (benign.analysis.crossings.LAWS)


def out_of_sample(gain: float, se: float, lines: int) -> str:
    """The held-out word of law (i) against the base rate, from its gain in log-likelihood per
    crossing and that gain's standard error (clustered by line, Student's t on ``lines`` - 1):
    "beats the base rate" where the 95% interval of the gain lies above 0, "worse than the base
    rate" below, "no clear difference" otherwise."""
    if not (np.isfinite(gain) and np.isfinite(se)) or lines < 2:
        return "not scored"
    half = float(student.ppf(0.975, lines - 1)) * se
    if gain - half > 0:
        return "beats the base rate"
    if gain + half < 0:
        return "worse than the base rate"
    return "no clear difference from the base rate"


GRID = "set by the grid"  # the words of an interval whose width the brackets set (sigma at its floor)


def _term(row: dict, name: str, fit: crossings.CrossingFit | None, term: str, transform=None) -> None:
    """A term's estimate and interval (``transform``ed), its half-width from the grid alone and
    whether the grid sets it: the interval holds the grid's variance and the jackknife's
    (benign.analysis.crossings.CrossingFit.grid), and the jackknife's is no larger, i.e. the
    interval no wider than sqrt(2) times what a line known only to its resolution allows."""
    value, (low, high) = (
        (fit.estimates[term], fit.intervals[term]) if fit and term in fit.estimates else (np.nan, (np.nan, np.nan))
    )
    f = transform or (lambda v: v)
    row[name], row[f"{name}_low"], row[f"{name}_high"] = f(value), f(low), f(high)
    grid = fit.grid.get(term, np.nan) if fit else np.nan
    row[f"{name}_grid"] = grid
    row[f"{name}_grid_set"] = bool(np.isfinite(value) and np.isfinite(grid) and (high - low) / 2 <= math.sqrt(2) * grid)


def boundary_row(cells: pd.DataFrame, name: str, horizon: int, theory_a: float, theory_b: float, fixed: dict,
                 k_max: float, knots: tuple, margin: float) -> dict:  # fmt: skip
    """One boundary at one horizon: its crossings, the laws' fits, their held-out scores against
    the base rate, the decades' slopes, the words with ``margin`` and the run-level logistic
    fit's steepness."""
    cr = crossings.crossings(cells)
    seeds = cr.groupby(["d", "n"])["seed"].nunique()
    row = {"boundary": name, "horizon": int(horizon), "runs": len(cells), "lines": cells.groupby(["d", "n"]).ngroups,
           "seeds": cells["seed"].nunique(), "seeds_per_line_min": int(seeds.min()) if len(seeds) else 0,
           "crossings": len(cr), "bracketed": int((cr["censored"] == "").sum()),
           "censored_left": int((cr["censored"] == "left").sum()), "censored_right": int((cr["censored"] == "right").sum()),
           "multiple": int((cr["changes"] > 1).sum()), "theory_a": theory_a, "theory_b": theory_b, "margin": margin}  # fmt: skip
    fits = {law: crossings.fit(cr, law, fixed if law == "theory" else None, knots) for law in COMPARED}
    both = crossings.fit(cr, "interaction", None, knots)
    power = fits["power"]
    _term(row, "c", power, "log_c", np.exp)
    for term in ("a", "b"):
        _term(row, term, power, term)
    _term(row, "e", both, "e")
    _term(row, "gamma", fits["theory"], "gamma")
    _term(row, "b_theory_law", fits["theory"], "b")
    row["c_theory_law"] = math.exp(fits["theory"].estimates["log_c"]) if fits["theory"] else np.nan
    exponents = crossings.fit(cr, "exponents", {"a": theory_a, "b": theory_b}, knots, intervals=False)
    row["c_theory"] = math.exp(exponents.estimates["log_c"]) if exponents else np.nan
    row["sigma"] = power.sigma if power else np.nan
    row["sigma_floor"] = crossings.sigma_floor(cr) if len(cr) else np.nan
    row["sigma_at_floor"] = bool(power is not None and power.at_floor)
    row["resolution"] = crossings.line_resolution(cr) if len(cr) else np.nan
    scores = {law: crossings.held_out_scores(cr, law, fixed if law == "theory" else None) for law in COMPARED}
    for law in COMPARED:
        row[f"aic_{law}"] = fits[law].aic if fits[law] else np.nan
        row[f"heldout_{law}"] = float(np.mean(scores[law])) if len(scores[law]) else np.nan
    scored = {law: row[f"heldout_{law}"] for law in COMPARED[:3] if np.isfinite(row[f"heldout_{law}"])}
    aics = {law: row[f"aic_{law}"] for law in COMPARED[:3] if np.isfinite(row[f"aic_{law}"])}
    row["best_heldout"] = max(scored, key=scored.get) if scored else ""
    row["best_aic"] = min(aics, key=aics.get) if aics else ""
    row["heldout_gain"], row["heldout_gain_se"] = crossings.held_out_gain(cr, scores["power"], scores["none"])
    row["out_of_sample"] = out_of_sample(row["heldout_gain"], row["heldout_gain_se"], row["lines"])
    for k0, k1 in zip(knots[:-1], knots[1:]):
        _term(row, crossings.slope_name(k0, k1), fits["decades"], crossings.slope_name(k0, k1))
    for axis, theory in (("a", theory_a), ("b", theory_b), ("e", 0.0)):
        row[f"{axis}_verdict"] = (
            "not fitted" if not np.isfinite(row[axis])
            else GRID if row[f"{axis}_grid_set"]
            else verdict(row[f"{axis}_low"], row[f"{axis}_high"], theory, margin)
        )  # fmt: skip
    row["lines_fitted"] = power.lines if power else 0
    logistic = boundaries.fit(cells, "side", k_max, intervals=False)
    row["k"] = logistic.estimates["k"] if logistic else np.nan
    row["k_capped"] = bool(logistic and logistic.estimates["k"] >= k_max * (1 - 1e-6))
    if "r" in cells:  # runs the argmax calls "selects" whose attention is still near uniform (r > 0.9)
        argmax = cells["selects_argmax"].astype(bool)
        row["argmax_near_uniform"] = (
            float((argmax & (cells["r"] > 0.9)).sum() / argmax.sum()) if argmax.any() else np.nan
        )
    return row


def horizon_settling(name: str, runs: pd.DataFrame, labels: pd.DataFrame, column: str, negate: bool) -> list[dict]:
    """Between each pair of consecutive horizons, the same lines' crossings compared
    (benign.analysis.convergence.drift): the drift of ln ||mu||* per decade of time, averaged per
    line, with its interval over the lines, and whether the boundary has settled;
    ``settled_from``, the first horizon from which every later pair has settled (NaN if none)."""
    horizons = sorted(labels["horizon"].unique())
    out = []
    for before, after in zip(horizons[:-1], horizons[1:]):
        pairs = convergence_mod.paired_crossings(side_labels(labels[labels["horizon"] == before], runs, column, negate),
                                                 side_labels(labels[labels["horizon"] == after], runs, column, negate))  # fmt: skip
        judged = convergence_mod.drift(pairs, math.log10(after / before))
        out.append({"boundary": name, "horizon": int(after), "previous_horizon": int(before),
                    **{f"settle_{k}": v for k, v in judged.items()}})  # fmt: skip
    settled = [r["settle_verdict"] == "settled" for r in out]
    first = next((out[i]["previous_horizon"] for i in range(len(out)) if all(settled[i:])), np.nan)
    for r in out:
        r["settled_from"] = first
    return out


def horizon_limit(name: str, runs: pd.DataFrame, labels: pd.DataFrame, column: str, negate: bool,
                  knots: tuple) -> dict:  # fmt: skip
    """The exponent of d extrapolated to an infinite horizon: on the lines that reach every
    horizon, a at each horizon fitted to their crossings, then a = a_inf + s / ln(horizon) by
    weighted least squares with the a's known variances (statsmodels WLS, scale fixed at 1)."""
    import statsmodels.api as sm

    last = runs.groupby(["d", "n"])["steps"].max()
    common = last[last >= labels["horizon"].max()].index
    points = []
    for horizon, at in labels[labels["horizon"] > 1].groupby("horizon"):  # 1 / ln(horizon) is finite past 1
        cells = side_labels(at, runs, column, negate)
        cells = cells[cells.set_index(["d", "n"]).index.isin(common)]
        f = crossings.fit(crossings.crossings(cells), "power", None, knots) if len(cells) else None
        if f is not None and "a" in f.estimates:
            points.append((horizon, f.estimates["a"], math.sqrt(f.cov.loc["a", "a"])))
    out = {"boundary": name, "lines_every_horizon": len(common), "a_by_horizon": points, "a_limit": np.nan,
           "a_limit_low": np.nan, "a_limit_high": np.nan}  # fmt: skip
    if len(points) >= 3:
        h, a, se = (np.array(v, dtype=float) for v in zip(*points))
        wls = sm.WLS(a, sm.add_constant(1 / np.log(h)), weights=1 / se**2).fit(cov_type="fixed scale")
        low, high = np.asarray(wls.conf_int(alpha=0.05))[0]
        out.update(a_limit=float(wls.params[0]), a_limit_low=float(low), a_limit_high=float(high))
    return out


def convergence_left_out(convergence: pd.DataFrame) -> dict[str, list[float]]:
    """{boundary: d left out of its fits}: benign.analysis.convergence.left_out, none without a check."""
    return convergence_mod.left_out(convergence) if convergence is not None and len(convergence) else {}


@dataclass(frozen=True)
class BoundaryFits:
    """:func:`fit_boundaries`' answer: one row per (boundary, horizon), each boundary's limit in
    1 / ln(horizon), and the d the step check left out of each boundary's fits."""

    table: pd.DataFrame
    limits: list[dict]
    dropped: dict[str, list[float]]


def fit_boundaries(runs: pd.DataFrame, labels: pd.DataFrame, convergence: pd.DataFrame, k_max: float,
                   margin: float) -> BoundaryFits:  # fmt: skip
    """Every boundary at every horizon (:func:`boundary_row`), less the d whose step check
    (``convergence``) did not converge, with its settling between horizons, its limit, and the
    normalised time of each horizon (where the runs share one step size)."""
    dropped = convergence_left_out(convergence)
    rows, limits, settling = [], [], []
    for name, column, negate, theory_a, theory_b, fixed in BOUNDARIES:
        kept = runs[~runs["d"].isin(dropped.get(name, []))]
        knots = crossings.decade_knots(kept["d"])
        for horizon, at in labels.groupby("horizon"):
            cells = side_labels(at, kept, column, negate)
            if cells.empty:  # every line that reaches this horizon was left out by the step check
                continue
            row = boundary_row(cells, name, horizon, theory_a, theory_b, fixed, k_max, knots, margin)
            rows.append({**row, "left_out_d": "; ".join(f"d {d:g}" for d in dropped.get(name, [])) or "none"})
        limits.append(horizon_limit(name, kept, labels, column, negate, knots))
        settling += horizon_settling(name, kept, labels, column, negate)
    table = pd.DataFrame(rows)
    if settling:
        table = table.merge(pd.DataFrame(settling), on=["boundary", "horizon"], how="left")
    for limit in limits:
        at = table["boundary"] == limit["boundary"]
        for key in ("lines_every_horizon", "a_limit", "a_limit_low", "a_limit_high"):
            table.loc[at, key] = limit[key]
    steps = runs["step_size"].dropna().unique()
    table.insert(2, "time", table["horizon"] * steps[0] if len(steps) == 1 else np.nan)
    return BoundaryFits(table, limits, dropped)


MODEL_TERMS = ("log_c", "a", "b")


def fitted_model(runs: pd.DataFrame, labels: pd.DataFrame, dropped: dict | None = None) -> pd.DataFrame:
    """Per boundary and horizon, law (i) fitted to the crossings, log ||mu||* = log c + a log d +
    b log n + sigma z, with the covariance of its terms, the range of d and n it was fitted on
    (``dropped``: {boundary: d left out}) and the step size and noise std of its runs (the lr at
    a d is step_size / (sigma_noise^2 d))."""
    rows = []
    steps = runs["step_size"].dropna().unique()
    for name, column, negate, *_ in BOUNDARIES:
        kept = runs[~runs["d"].isin((dropped or {}).get(name, []))]
        knots = crossings.decade_knots(kept["d"])
        for horizon, at in labels.groupby("horizon"):
            cells = side_labels(at, kept, column, negate)
            fit = crossings.fit(crossings.crossings(cells), "power", None, knots)
            if fit is None:
                continue
            row = {"boundary": name, "horizon": int(horizon), "d_min": cells["d"].min(), "d_max": cells["d"].max(),
                   "n_min": cells["n"].min(), "n_max": cells["n"].max(), "sigma": fit.sigma, "crossings": fit.crossings, "lines": fit.lines,
                   "step_size": steps[0] if len(steps) == 1 else np.nan, "sigma_noise": float(kept["sigma"].iloc[0]),
                   **_integration(kept), "d_min_per_n2": float((cells["d"] / cells["n"] ** 2).min())}  # fmt: skip
            for t in MODEL_TERMS:
                row[t] = fit.estimates.get(t, 0.0)
                for u in MODEL_TERMS:
                    row[f"cov_{t}_{u}"] = fit.cov.loc[t, u] if t in fit.cov.index and u in fit.cov.index else 0.0
            rows.append(row)
    return pd.DataFrame(rows)


def _integration(runs: pd.DataFrame) -> dict:
    """How the runs were integrated: gradient descent or the flow, and the flow's tolerance (one
    each, else empty): what a run that checks a prediction must use."""
    integrators = runs["integrator"].dropna().unique() if "integrator" in runs else np.array(["gd"])
    tols = runs["flow_tol"].dropna().unique() if "flow_tol" in runs else np.array([])
    return {
        "integrator": integrators[0] if len(integrators) == 1 else "",
        "flow_tol": tols[0] if len(tols) == 1 else np.nan,
    }
