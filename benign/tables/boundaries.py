"""The regime-boundaries table: per boundary and horizon, the crossings of the atlas's lines
fitted by interval-censored maximum likelihood, three laws of d and n compared, the local slope
of each decade of d, and words that follow the intervals (docs/regimes.md#crossings)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from benign.analysis import boundaries, crossings
from benign.analysis.boundaries import BOUNDARIES
from benign.analysis.theory import Criteria
from benign.tables.common import MISSING, PathLike, _markdown_table, write

COMPARED = ("power", "theory", "decades", "none")  # the laws compared (benign.analysis.crossings.LAWS)
LAW_NAMES = {"power": "(i) c d^a n^b", "theory": "(ii) theory x (ln d)^gamma", "decades": "(iii) slope per decade",
             "none": "base (no law)"}  # fmt: skip


def verdict(low: float, high: float, theory: float, beats_base: bool = True) -> str:
    """Words that follow an interval and the fit's out-of-sample score: "fails out of sample"
    where the fit predicts held-out lines no better than the base rate; "departs" where a closed
    end excludes the theory's value (one end is enough); "agrees" where a closed interval holds
    it (and, for a non-zero value, excludes 0, the law without that axis); else "cannot tell"."""
    if not beats_base:
        return "fails out of sample"
    if (np.isfinite(low) and low > theory) or (np.isfinite(high) and high < theory):
        return "departs"
    if not (np.isfinite(low) and np.isfinite(high)):
        return "cannot tell"
    if theory != 0 and low <= 0 <= high:
        return "cannot tell"
    return "agrees"


def side_labels(labels: pd.DataFrame, runs: pd.DataFrame, column: str, negate: bool) -> pd.DataFrame:
    """The runs' (d, n, signal_norm, seed) with the boolean ``side`` of one boundary, per horizon."""
    cells = labels.merge(runs[["run_id", "d", "n", "signal_norm", "seed"]], on="run_id")
    side = cells[column].astype(bool)
    return cells.assign(side=~side if negate else side)


def _term(row: dict, name: str, fit: crossings.CrossingFit | None, term: str, transform=None) -> None:
    value, (low, high) = (
        (fit.estimates[term], fit.intervals[term]) if fit and term in fit.estimates else (np.nan, (np.nan, np.nan))
    )
    f = transform or (lambda v: v)
    row[name], row[f"{name}_low"], row[f"{name}_high"] = f(value), f(low), f(high)


def boundary_row(cells: pd.DataFrame, name: str, horizon: int, theory_a: float, theory_b: float, fixed: dict,
                 k_max: float, knots: tuple) -> dict:  # fmt: skip
    """One boundary at one horizon: its crossings, the laws' fits and comparison, the decades'
    slopes, the verdicts and the run-level logistic fit's steepness."""
    cr = crossings.crossings(cells)
    row = {"boundary": name, "horizon": int(horizon), "runs": len(cells), "lines": cells.groupby(["d", "n"]).ngroups,
           "seeds": cells["seed"].nunique(), "crossings": len(cr), "bracketed": int((cr["censored"] == "").sum()),
           "censored_left": int((cr["censored"] == "left").sum()), "censored_right": int((cr["censored"] == "right").sum()),
           "multiple": int((cr["changes"] > 1).sum()), "theory_a": theory_a, "theory_b": theory_b}  # fmt: skip
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
    for law in COMPARED:
        row[f"aic_{law}"] = fits[law].aic if fits[law] else np.nan
        row[f"heldout_{law}"] = crossings.held_out(cr, law, fixed if law == "theory" else None)
    scored = {law: row[f"heldout_{law}"] for law in COMPARED[:3] if np.isfinite(row[f"heldout_{law}"])}
    aics = {law: row[f"aic_{law}"] for law in COMPARED[:3] if np.isfinite(row[f"aic_{law}"])}
    row["best_heldout"] = max(scored, key=scored.get) if scored else ""
    row["best_aic"] = min(aics, key=aics.get) if aics else ""
    row["beats_base"] = bool(np.isfinite(row["heldout_power"]) and row["heldout_power"] > row["heldout_none"])
    for k0, k1 in zip(knots[:-1], knots[1:]):
        _term(row, crossings.slope_name(k0, k1), fits["decades"], crossings.slope_name(k0, k1))
    for axis, theory in (("a", theory_a), ("b", theory_b)):
        row[f"{axis}_verdict"] = (verdict(row[f"{axis}_low"], row[f"{axis}_high"], theory, row["beats_base"])
                                  if np.isfinite(row[axis]) else "not fitted")  # fmt: skip
    row["e_verdict"] = (
        verdict(row["e_low"], row["e_high"], 0.0, row["beats_base"]) if np.isfinite(row["e"]) else "not fitted"
    )
    logistic = boundaries.fit(cells, "side", k_max, intervals=False)
    row["k"] = logistic.estimates["k"] if logistic else np.nan
    row["k_capped"] = bool(logistic and logistic.estimates["k"] >= k_max * (1 - 1e-6))
    return row


def horizon_limit(name: str, runs: pd.DataFrame, labels: pd.DataFrame, column: str, negate: bool,
                  knots: tuple) -> dict:  # fmt: skip
    """The exponent of d extrapolated to an infinite horizon: on the lines that reach every
    horizon, a at each horizon fitted to their crossings, then a = a_inf + s / ln(horizon) by
    weighted least squares with the a's known variances (statsmodels WLS, scale fixed at 1)."""
    import statsmodels.api as sm

    last = runs.groupby(["d", "n"])["steps"].max()
    common = last[last >= labels["horizon"].max()].index
    points = []
    for horizon, at in labels.groupby("horizon"):
        cells = side_labels(at, runs, column, negate)
        cells = cells[cells.set_index(["d", "n"]).index.isin(common)]
        f = crossings.fit(crossings.crossings(cells), "power", None, knots) if len(cells) else None
        if f is not None and "a" in f.estimates:
            low, high = f.intervals["a"]
            points.append((horizon, f.estimates["a"], (high - low) / (2 * 1.959964)))
    out = {"boundary": name, "lines_every_horizon": len(common), "a_by_horizon": points, "a_limit": np.nan,
           "a_limit_low": np.nan, "a_limit_high": np.nan}  # fmt: skip
    if len(points) >= 3:
        h, a, se = (np.array(v, dtype=float) for v in zip(*points))
        wls = sm.WLS(a, sm.add_constant(1 / np.log(h)), weights=1 / se**2).fit(cov_type="fixed scale")
        low, high = np.asarray(wls.conf_int(alpha=0.05))[0]
        out.update(a_limit=float(wls.params[0]), a_limit_low=float(low), a_limit_high=float(high))
    return out


def regime_boundaries(runs: pd.DataFrame, labels: pd.DataFrame, stem: PathLike, criteria: Criteria | str,
                      resolution_limit: float) -> pd.DataFrame:  # fmt: skip
    """One row per (boundary, horizon), from ``runs`` and ``labels`` of
    benign.analysis.theory.atlas_labels (``criteria``: how they were labelled): the crossings,
    the power law c d^a n^b with 95% intervals and verdicts, the interaction e, the theory's law
    with a log factor (gamma), the laws' AIC and held-out log-likelihood beside the base rate,
    the slope of each decade of d, the run-level logistic steepness k (capped at the claimed
    ``resolution_limit``), and the exponent of d extrapolated in 1/ln(horizon)."""
    criteria = criteria if isinstance(criteria, str) else criteria_text(criteria)
    k_max = boundaries.k_max_for(resolution_limit)
    knots = crossings.decade_knots(runs["d"])
    rows, limits = [], []
    for name, column, negate, theory_a, theory_b, fixed in BOUNDARIES:
        for horizon, at in labels.groupby("horizon"):
            cells = side_labels(at, runs, column, negate)
            rows.append(boundary_row(cells, name, horizon, theory_a, theory_b, fixed, k_max, knots))
        limits.append(horizon_limit(name, runs, labels, column, negate, knots))
    table = pd.DataFrame(rows)
    for limit in limits:
        at = table["boundary"] == limit["boundary"]
        for key in ("lines_every_horizon", "a_limit", "a_limit_low", "a_limit_high"):
            table.loc[at, key] = limit[key]
    sweeps = sorted({name for names in runs["sweeps"] for name in names})
    horizons = sorted(labels["horizon"].unique())
    footer = _sections(table, knots, limits)
    write(table, _display(table), _header(sweeps, horizons, criteria, runs), stem, footer)
    return table


def _interval(value: float, low: float, high: float, digits: int = 3) -> str:
    if not np.isfinite(value):
        return MISSING
    ends = (f"{v:.{digits}g}" if np.isfinite(v) else "open" for v in (low, high))
    return f"{value:.{digits}g} [{next(ends)}, {next(ends)}]"


def _iv(r, p: str) -> str:
    return _interval(r[p], r[f"{p}_low"], r[f"{p}_high"])


def _display(table: pd.DataFrame) -> pd.DataFrame:
    rows = [r for _, r in table.iterrows()]
    return pd.DataFrame(
        {
            "Boundary": table["boundary"],
            "Horizon": table["horizon"],
            "Crossings (bracketed; censored below/above; >1 change)": [
                f"{r['crossings']} ({r['bracketed']}; {r['censored_left']}/{r['censored_right']}; {r['multiple']})"
                for r in rows
            ],
            "c": [_iv(r, "c") for r in rows],
            "a (exponent of d)": [_iv(r, "a") for r in rows],
            "theory a": [f"{r['theory_a']:g}: {r['a_verdict']}" for r in rows],
            "b (exponent of n)": [_iv(r, "b") for r in rows],
            "theory b": [f"{r['theory_b']:g}: {r['b_verdict']}" for r in rows],
            "e (log d log n)": [_iv(r, "e") + (f": {r['e_verdict']}" if np.isfinite(r["e"]) else "") for r in rows],
            "sigma": [f"{r['sigma']:.3g}" if np.isfinite(r["sigma"]) else MISSING for r in rows],
            "k (runs)": [
                f"{r['k']:.3g}" + (" (at the cap)" if r["k_capped"] else "") if np.isfinite(r["k"]) else MISSING
                for r in rows
            ],  # fmt: skip
        }
    )


def _sections(table: pd.DataFrame, knots: tuple, limits: list[dict]) -> list[str]:
    """The model comparison, the decades' slopes and the horizon extrapolation, as Markdown."""
    rows = [r for _, r in table.iterrows()]

    def num(v, digits=3):
        return f"{v:.{digits}f}" if np.isfinite(v) else MISSING

    comparison = pd.DataFrame(
        {
            "Boundary": table["boundary"],
            "Horizon": table["horizon"],
            **{f"held-out log-lik. {LAW_NAMES[law]}": [num(r[f"heldout_{law}"]) for r in rows] for law in COMPARED},
            **{f"AIC {LAW_NAMES[law]}": [num(r[f"aic_{law}"], 1) for r in rows] for law in COMPARED},
            "gamma of (ii)": [_iv(r, "gamma") for r in rows],
            "best held-out / AIC": [
                f"{LAW_NAMES.get(r['best_heldout'], MISSING)} / {LAW_NAMES.get(r['best_aic'], MISSING)}" for r in rows
            ],  # fmt: skip
        }
    )
    names = [crossings.slope_name(k0, k1) for k0, k1 in zip(knots[:-1], knots[1:])]
    slopes = pd.DataFrame(
        {
            "Boundary": table["boundary"],
            "Horizon": table["horizon"],
            "theory a": table["theory_a"].map(lambda v: f"{v:g}"),
            **{
                f"d {k0:.0e} to {k1:.0e}": [_iv(r, n) for r in rows]
                for (k0, k1), n in zip(zip(knots[:-1], knots[1:]), names)
            },
        }
    )
    extrapolated = pd.DataFrame(
        {
            "Boundary": [lim["boundary"] for lim in limits],
            "Lines reaching every horizon": [lim["lines_every_horizon"] for lim in limits],
            "a at each horizon on those lines": [
                "; ".join(f"{h:g}: {a:.3f} ± {1.96 * se:.3f}" for h, a, se in lim["a_by_horizon"]) or MISSING
                for lim in limits
            ],
            "a extrapolated to 1/ln(horizon) = 0": [
                _interval(lim["a_limit"], lim["a_limit_low"], lim["a_limit_high"]) for lim in limits
            ],
        }
    )
    return [
        "### Model comparison",
        "Mean log-likelihood per crossing of each (d, n) line's crossings under the law fitted to the other lines "
        "(higher is better), and AIC on all crossings (lower is better). (i) c d^a n^b; (ii) the theorem's exponents with "
        "a log factor, c d^(1/4) (ln d)^gamma n^b for the selection boundaries and c (d / n)^(1/2) (ln d)^gamma for the "
        "not-overfitting one; (iii) one slope of log d per decade between the grid's d, and b; base: one ||mu||* for "
        "every line.",
        _markdown_table(comparison),
        "### Local slopes per decade of d",
        "The slopes of law (iii), each with its 95% interval: where they fall towards the theory's value as d grows, "
        "the power law's a measures a finite-d crossover, not the asymptotic exponent.",
        _markdown_table(slopes),
        "### The exponent of d as the horizon grows",
        "On the lines that reach every horizon, law (i) at each horizon (± 95%), and a = a_inf + s / ln(horizon) fitted "
        "by weighted least squares with those variances: a_inf, with its 95% interval, is where the finite-horizon "
        "exponent heads.",
        _markdown_table(extrapolated),
    ]


def _header(sweeps, horizons, criteria: str, runs: pd.DataFrame) -> list[str]:
    d, n = np.sort(runs["d"].unique()), np.sort(runs["n"].unique())
    return [
        "## Synthetic data: fitted regime boundaries",
        f"Runs of the sweeps {', '.join(sweeps)}: d from {d[0]:g} to {d[-1]:g} ({math.log10(d[-1] / d[0]):.1f} decades), "
        f"n in {{{', '.join(f'{v:g}' for v in n)}}}, labels ({criteria}) read at the last logged step at or before "
        f"each horizon ({', '.join(map(str, horizons))} steps). The runs of one (d, n, seed) line share their data and "
        "initialisation, so each line, seed and horizon gives one crossing, the unit every interval counts: ||mu||* lies "
        "between the last norm below the boundary's upper side and the first above its lower side; a line on one side "
        "throughout is censored at its end norm, and a line whose label changes more than once keeps the bracket "
        "holding every change (both counted). log ||mu||* = law + sigma z is fitted by interval-censored maximum "
        "likelihood; brackets are 95% Wald intervals ('open': not closed). e: the coefficient of log d log n added to "
        "law (i), 0 for a product law. k: the steepness of the logistic fit over the runs, capped at the resolution the "
        "runs claim.",
        "Theory (Theorem 4.1): not overfitting above ||mu|| ~ sqrt(d / n) (a = 1/2, b = -1/2); harmful below "
        "||mu|| ~ d^(1/4) (a = 1/4, b = 0), read here by the normalised test loss r and, free of the horizon's "
        "size effect, by the test samples' most-attended token (argmax selection). Words: 'fails out of sample' where "
        "law (i) predicts held-out lines no better than the base rate; 'departs' where a closed end excludes the "
        "theory's value; 'agrees' where a closed interval holds it (and, for a non-zero value, excludes 0); 'cannot "
        "tell' otherwise. These are statements at finite d, n and horizon.",
    ]


def criteria_text(criteria) -> str:
    """How a run at a horizon is labelled (a benign.analysis.theory.Criteria), in words, for the table's header."""
    return (f"not overfitting if under a fraction {criteria.fit_threshold:g} of the flipped labels is fitted; "
            f"attention selects if the normalised test loss r is at most {criteria.loss_threshold:g}; argmax "
            f"selection if the relevant token is the most attended on at least a fraction {criteria.rate_threshold:g} "
            "of the test samples")  # fmt: skip


MODEL_TERMS = ("log_c", "a", "b")


def fitted_model(runs: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """Per boundary and horizon, law (i) fitted to the crossings, log ||mu||* = log c + a log d +
    b log n + sigma z, with the covariance of its terms and the range of d and n it was fitted on."""
    knots = crossings.decade_knots(runs["d"])
    rows = []
    for name, column, negate, *_ in BOUNDARIES:
        for horizon, at in labels.groupby("horizon"):
            cells = side_labels(at, runs, column, negate)
            fit = crossings.fit(crossings.crossings(cells), "power", None, knots)
            if fit is None:
                continue
            row = {"boundary": name, "horizon": int(horizon), "d_min": cells["d"].min(), "d_max": cells["d"].max(),
                   "n_min": cells["n"].min(), "n_max": cells["n"].max(), "sigma": fit.sigma, "crossings": fit.crossings}  # fmt: skip
            for t in MODEL_TERMS:
                row[t] = fit.estimates.get(t, 0.0)
                for u in MODEL_TERMS:
                    row[f"cov_{t}_{u}"] = fit.cov.loc[t, u] if t in fit.cov.index and u in fit.cov.index else 0.0
            rows.append(row)
    return pd.DataFrame(rows)


def regime_model(runs: pd.DataFrame, labels: pd.DataFrame, stem: PathLike, resolution_limit: float) -> pd.DataFrame:
    """The fitted model the regime predictor reads (benign.analysis.predictor): :func:`fitted_model`.
    ``resolution_limit`` is the atlas tables' shared parameter; the crossing law does not use it."""
    del resolution_limit
    table = fitted_model(runs, labels)
    display = pd.DataFrame(
        {
            "boundary": table["boundary"],
            "horizon": table["horizon"],
            "||mu||* law": [f"{math.exp(r.log_c):.3g} d^{r.a:.3f} n^{r.b:.3f}" for r in table.itertuples()],
            "sigma": table["sigma"].map(lambda v: f"{v:.3g}"),
            "fitted on": [f"d {r.d_min:g} to {r.d_max:g}, n {r.n_min:g} to {r.n_max:g}" for r in table.itertuples()],
        }
    )
    header = [
        "## Synthetic data: the fitted regime model",
        "Per boundary and horizon: law (i) fitted to the atlas's crossings (results/tables/regime_boundaries), with "
        "the covariance of its terms in the CSV. `python -m benign regime` answers from this table: P(side) = "
        "Phi((log ||mu|| - log ||mu||*) / sigma), and its interval from the law's.",
    ]
    write(table, display, header, stem)
    return table
