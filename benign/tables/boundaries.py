"""The regime-boundaries table: per boundary and horizon, the crossings of the atlas's lines
fitted by interval-censored maximum likelihood, three laws of d and n compared, the local slope
of each decade of d, and words that follow the intervals (docs/regimes.md#crossings)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from benign.analysis import boundaries, crossings
from benign.analysis.boundary_fits import COMPARED, GRID, convergence_left_out, fit_boundaries, fitted_model
from benign.analysis.theory import Criteria
from benign.synthetic import spec
from benign.tables.common import MISSING, PathLike, markdown_table, write

LAW_NAMES = {"power": "(i) c d^a n^b", "theory": "(ii) theory x (ln d)^gamma", "decades": "(iii) slope per decade",
             "none": "base (no law)"}  # fmt: skip


def regime_boundaries(runs: pd.DataFrame, labels: pd.DataFrame, convergence: pd.DataFrame, stem: PathLike,
                      criteria: Criteria | str, resolution_limit: float, margin: float) -> pd.DataFrame:  # fmt: skip
    """One row per (boundary, horizon), from ``runs`` and ``labels`` of
    benign.analysis.theory.atlas_view (``criteria``: how they were labelled), less the d whose
    step check (``convergence``, benign.analysis.convergence.step_convergence) did not converge:
    benign.analysis.boundary_fits.fit_boundaries (the crossings, the power law c d^a n^b with 95%
    intervals and words with ``margin``, the interaction e, the theory's law with a log factor
    (gamma), the laws' AIC and held-out log-likelihood, law (i)'s gain over the base rate, the
    slope of each decade of d, the settling between horizons, the run-level logistic steepness k
    capped at the claimed ``resolution_limit``, and the exponent of d extrapolated in
    1/ln(horizon)), worded and written."""
    criteria = criteria if isinstance(criteria, str) else criteria_text(criteria)
    fits = fit_boundaries(runs, labels, convergence, boundaries.k_max_for(resolution_limit), margin)
    table = fits.table
    sweeps = sorted({name for names in runs["sweeps"] for name in names})
    knots = crossings.decade_knots(runs["d"])
    footer = _sections(table, knots, fits.limits, fits.dropped)
    write(table, _display(table), _header(sweeps, sorted(labels["horizon"].unique()), criteria, runs, margin), stem,
          footer)  # fmt: skip
    return table


def _interval(value: float, low: float, high: float, digits: int = 3) -> str:
    if not np.isfinite(value):
        return MISSING
    ends = (f"{v:.{digits}g}" if np.isfinite(v) else "open" for v in (low, high))
    return f"{value:.{digits}g} [{next(ends)}, {next(ends)}]"


def _iv(r, p: str) -> str:
    """A term with its interval, or the words saying that the grid, not the data, sets it (with
    the half-width the grid allows)."""
    if np.isfinite(r[p]) and r.get(f"{p}_grid_set", False):
        return f"{GRID} (±{r[f'{p}_grid']:.2g})"
    return _interval(r[p], r[f"{p}_low"], r[f"{p}_high"])


def _worded(r, p: str, theory: float) -> str:
    if not np.isfinite(r[p]):
        return MISSING
    words = r[f"{p}_verdict"]
    if words == GRID:
        return _iv(r, p)
    if words == "agrees" and not r[f"{p}_low"] <= theory <= r[f"{p}_high"]:
        words = "agrees (the interval excludes the value itself)"
    set_up = boundaries.SET_UP.get((boundaries.LABEL_OF.get(r["boundary"]), p))
    given = f"; {set_up[1]} gives {set_up[0]:g} before any dynamics" if set_up else ""
    return f"{_iv(r, p)}: {words} (theory {theory:g} ± {r['margin']:g}{given})"


def _moved(r) -> str:
    if not np.isfinite(r.get("settle_drift", np.nan)):
        return MISSING if not isinstance(r.get("settle_verdict"), str) else r["settle_verdict"]
    return (f"{_interval(r['settle_drift'], r['settle_drift_low'], r['settle_drift_high'])} "
            f"(margin ±{r['settle_margin']:.3g}; {r['settle_lines']} lines): {r['settle_verdict']}")  # fmt: skip


def _display(table: pd.DataFrame) -> pd.DataFrame:
    rows = [r for _, r in table.iterrows()]
    return pd.DataFrame(
        {
            "Boundary": table["boundary"],
            "Horizon (steps; time)": [
                f"{r['horizon']} ({r['time']:.3g})" if np.isfinite(r["time"]) else f"{r['horizon']}" for r in rows
            ],  # fmt: skip
            "Crossings (bracketed; censored below/above; >1 change; seeds per line)": [
                f"{r['crossings']} ({r['bracketed']}; {r['censored_left']}/{r['censored_right']}; {r['multiple']}; "
                f">= {r['seeds_per_line_min']})"
                for r in rows
            ],
            "a (exponent of d)": [_worded(r, "a", r["theory_a"]) for r in rows],
            "b (exponent of n)": [_worded(r, "b", r["theory_b"]) for r in rows],
            "e (log d log n)": [_worded(r, "e", 0.0) for r in rows],
            "sigma (its floor; lines fitted)": [
                f"{r['sigma']:.3g} ({r['sigma_floor']:.3g}; {r['lines_fitted']})"
                if np.isfinite(r["sigma"])
                else MISSING
                for r in rows
            ],  # fmt: skip
            "Out of sample: law (i) over the base rate, per crossing": [
                f"{r['heldout_gain']:.3g} ± {r['heldout_gain_se']:.2g}: {r['out_of_sample']}"
                if np.isfinite(r["heldout_gain"])
                else r["out_of_sample"]
                for r in rows
            ],  # fmt: skip
            "Drift since the previous horizon, ln ||mu||* per decade of time": [_moved(r) for r in rows],
            "k (runs)": [
                f"{r['k']:.3g}" + (" (at the cap)" if r["k_capped"] else "") if np.isfinite(r["k"]) else MISSING
                for r in rows
            ],  # fmt: skip
        }
    )


def _num(v, digits=3) -> str:
    return f"{v:.{digits}f}" if np.isfinite(v) else MISSING


def _comparison(table: pd.DataFrame) -> pd.DataFrame:
    """Per boundary and horizon: each law's held-out log-likelihood and AIC, and the best of each."""
    rows = [r for _, r in table.iterrows()]
    return pd.DataFrame(
        {
            "Boundary": table["boundary"],
            "Horizon": table["horizon"],
            **{f"held-out log-lik. {LAW_NAMES[law]}": [_num(r[f"heldout_{law}"]) for r in rows] for law in COMPARED},
            **{f"AIC {LAW_NAMES[law]}": [_num(r[f"aic_{law}"], 1) for r in rows] for law in COMPARED},
            "gamma of (ii)": [_iv(r, "gamma") for r in rows],
            "best held-out / AIC": [
                f"{LAW_NAMES.get(r['best_heldout'], MISSING)} / {LAW_NAMES.get(r['best_aic'], MISSING)}" for r in rows
            ],  # fmt: skip
        }
    )


def _slopes(table: pd.DataFrame, knots: tuple) -> pd.DataFrame:
    """Per boundary and horizon: law (iii)'s slope in each decade between the grid's d."""
    rows = [r for _, r in table.iterrows()]
    names = [crossings.slope_name(k0, k1) for k0, k1 in zip(knots[:-1], knots[1:])]
    return pd.DataFrame(
        {
            "Boundary": table["boundary"],
            "Horizon": table["horizon"],
            "theory a": table["theory_a"].map(lambda v: f"{v:g}"),
            **{
                f"d {k0:.0e} to {k1:.0e}": [_iv(r, n) if n in r else MISSING for r in rows]
                for (k0, k1), n in zip(zip(knots[:-1], knots[1:]), names)
            },
        }
    )


def _horizons(table: pd.DataFrame, dropped: dict) -> pd.DataFrame:
    """Per boundary: the horizon it settled from, its last drift, the d the step check left out."""
    firsts = table.drop_duplicates("boundary", keep="last")  # the last horizon's row holds the settling
    return pd.DataFrame(
        {
            "Boundary": firsts["boundary"],
            "Settled from horizon": [
                f"{v:g}" if np.isfinite(v) else "not by the last horizon"
                for v in firsts.get("settled_from", pd.Series(np.nan, index=firsts.index))
            ],  # fmt: skip
            "Drift between the last two horizons, ln ||mu||* per decade of time": [
                _interval(
                    *(
                        table[table["boundary"] == b].iloc[-1].get(f"settle_drift{s}", np.nan)
                        for s in ("", "_low", "_high")
                    )
                )
                for b in firsts["boundary"]
            ],  # fmt: skip
            "Left out by the step check (d)": [
                dropped.get(b) and ", ".join(f"{d:g}" for d in dropped[b]) or "none" for b in firsts["boundary"]
            ],  # fmt: skip
        }
    )


def _extrapolated(limits: list[dict]) -> pd.DataFrame:
    """Per boundary: law (i)'s a at each horizon on the lines reaching all, and its 1/ln limit."""
    return pd.DataFrame(
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


def _near_uniform(table: pd.DataFrame) -> str:
    """Per horizon, the share of argmax-selecting runs whose r is still above 0.9."""
    argmax = table[table["boundary"] == "argmax selection"]
    shares = [(r.horizon, getattr(r, "argmax_near_uniform", np.nan)) for r in argmax.itertuples()]
    return "; ".join(f"{h}: {v:.0%}" for h, v in shares if np.isfinite(v))


def _sections(table: pd.DataFrame, knots: tuple, limits: list[dict], dropped: dict) -> list[str]:
    """The model comparison, the decades' slopes, the horizons, the step check's exclusions and
    the horizon extrapolation, as Markdown."""
    near_uniform = _near_uniform(table)
    return [
        "### Model comparison",
        "Mean log-likelihood per crossing of each (d, n) line's crossings under the law fitted to the other lines, its "
        "parameters' uncertainty included (higher is better), and AIC on all crossings (lower is better). (i) c d^a n^b; "
        "(ii) the theorem's exponents with a log factor, c d^(1/4) (ln d)^gamma n^b for the selection boundaries and "
        "c (d / n)^(1/2) (ln d)^gamma for the not-overfitting one; (iii) one slope of log d per decade between the "
        "grid's d, and b; base: one ||mu||* for every line.",
        markdown_table(_comparison(table)),
        "### Local slopes per decade of d",
        "The slopes of law (iii), each with its 95% interval ('set by the grid', with the half-width the grid allows, "
        "where the interval is no wider than lines known only to their resolution would give: the width then measures "
        "the grid, not the data; 'open' where a single line identifies the slope, whose miss the lines' jackknife "
        "cannot see).",
        markdown_table(_slopes(table, knots)),
        "### Horizons and the step check",
        "Between two horizons the same lines' crossings are paired; a line's drift is the mean change of its seeds' "
        "bracket midpoints in ln ||mu||* per decade of time, and the lines are the units (Student's t on G - 1). A "
        "boundary has settled there where the 95% interval of the drift lies within the resolution its lines' "
        "staggered brackets give a crossing; 'settled from' is the first horizon from which every later pair has. A "
        "d is left out of a boundary's fits (at every horizon) where a crossing of the step check at the longest "
        "horizon moved beyond its own bracket (results/tables/step_convergence).",
        markdown_table(_horizons(table, dropped)),
        "### The exponent of d as the horizon grows (exploratory)",
        "On the lines that reach every horizon, law (i) at each horizon (± 95%), and a = a_inf + s / ln(horizon) fitted "
        "by weighted least squares with those variances. Exploratory: the horizons' fits share their lines, so the "
        "points are not independent, and a_inf extrapolates far past the last horizon.",
        markdown_table(_extrapolated(limits)),
        "### Argmax selection of near-uniform attention",
        "Share of the runs the argmax label calls 'selects' whose normalised test loss r is still above 0.9 (attention "
        f"barely off uniform), per horizon: {near_uniform or MISSING}.",
    ]


def _header(sweeps, horizons, criteria: str, runs: pd.DataFrame, margin: float) -> list[str]:
    d, n = np.sort(runs["d"].unique()), np.sort(runs["n"].unique())
    steps = runs["step_size"].dropna().unique()
    step = f"step size lr sigma^2 d = {steps[0]:g} on every run" if len(steps) == 1 else "mixed step sizes"
    return [
        "## Synthetic data: fitted regime boundaries",
        f"The runs' fixed parameters: {spec.fixed_text(runs)}.",
        f"Runs of the sweeps {', '.join(sweeps)}: d from {d[0]:g} to {d[-1]:g} ({math.log10(d[-1] / d[0]):.1f} decades), "
        f"n in {{{', '.join(f'{v:g}' for v in n)}}}, {step} (time = step size x steps), labels ({criteria}) read at "
        f"the last logged step at or before each horizon ({', '.join(map(str, horizons))} steps). Each (d, n, seed) "
        "line is its own data draw (benign/synthetic/gram.py), so each line, seed and horizon gives one crossing, the "
        "independent unit every interval counts: ||mu||* lies between the last norm below the boundary's upper side and "
        "the first above its lower side; a line on one side throughout is censored at its end norm, and a line whose "
        "label changes more than once keeps the bracket holding every change (both counted). log ||mu||* = law + "
        "sigma z is fitted by interval-censored maximum likelihood; brackets are 95% intervals ('open': not "
        "closed); intervals are Student's t on the lines, from the delete-one-line jackknife (the seeds of a (d, n) "
        "share whatever the law misses there, so the lines, not the crossings, are the units an exponent is fitted "
        "across). e: the coefficient of log d log n added to law (i), 0 for a product law. k: the steepness of the "
        "logistic fit over the runs, capped at the resolution the runs claim.",
        "Theory (Theorem 4.1): not overfitting above ||mu|| ~ sqrt(d / n) (a = 1/2, b = -1/2); harmful below "
        "||mu|| ~ d^(1/4) (a = 1/4, b = 0), read here by the normalised test loss r at the horizon, by the test "
        "samples' most-attended token (argmax selection) and by the test error of the hard-max readout, the error "
        "the run heads for (hard-max selection). The not-overfitting label needs a fraction of the n eta flipped "
        "labels fitted, so its crossing is an order statistic of the flipped samples' own crossings (the upper median "
        "of 2, 4 or 8 at n = 10, 20, 40): it sits higher at small n, which pulls b down. Words: 'agrees' where the whole "
        f"95% interval lies within ±{margin:g} of the theory's value; 'departs' where the whole interval lies "
        "further than that from it; 'cannot tell' where it reaches across an edge of the margin; 'set by the grid' where the interval is no wider than lines known only to their resolution "
        "would give. Where the set-up alone gives an exponent (the first step puts the argmax and hard-max boundaries "
        "at (d / n)^(1/4); at a fixed step size r's and the flipped labels' contours are SNR contours, a = 1/2) the "
        "words say so: agreeing with the theory there is the set-up's, not a test of the theorem's long-time claim "
        "(results/tables/boundaries_along_time follows each exponent from step 1). Out of "
        "sample: the held-out log-likelihood per crossing of law (i) less the base rate's, ± its standard error "
        "clustered by line. These are statements at finite d, n and horizon.",
    ]


def criteria_text(criteria) -> str:
    """How a run at a horizon is labelled (a benign.analysis.theory.Criteria), in words, for the table's header."""
    return (f"not overfitting if under a fraction {criteria.fit_threshold:g} of the flipped labels is fitted; "
            f"attention selects if the normalised test loss r is at most {criteria.loss_threshold:g}; argmax "
            f"selection if the relevant token is the most attended on at least a fraction {criteria.rate_threshold:g} "
            f"of the test samples; hard-max selection if the hard-max readout's test error is at most "
            f"{criteria.hardmax_threshold:g}")  # fmt: skip


def regime_model(runs: pd.DataFrame, labels: pd.DataFrame, convergence: pd.DataFrame, stem: PathLike,
                 resolution_limit: float) -> pd.DataFrame:  # fmt: skip
    """The fitted model the regime predictor reads (benign.analysis.predictor): benign.analysis.boundary_fits.fitted_model,
    less the d the step check left out (``convergence``). ``resolution_limit`` is the atlas
    tables' shared parameter; the crossing law does not use it."""
    del resolution_limit
    table = fitted_model(runs, labels, convergence_left_out(convergence))
    display = pd.DataFrame(
        {
            "boundary": table["boundary"],
            "horizon": table["horizon"],
            "||mu||* law": [f"{math.exp(r.log_c):.3g} d^{r.a:.3f} n^{r.b:.3f}" for r in table.itertuples()],
            "sigma": table["sigma"].map(lambda v: f"{v:.3g}"),
            "fitted on": [f"d {r.d_min:g} to {r.d_max:g}, n {r.n_min:g} to {r.n_max:g}" for r in table.itertuples()],
            "step size": table["step_size"].map(lambda v: f"{v:g}"),
        }
    )
    header = [
        "## Synthetic data: the fitted regime model",
        f"The runs' fixed parameters: {spec.fixed_text(runs)}.",
        "Per boundary and horizon: law (i) fitted to the atlas's crossings (results/tables/regime_boundaries), with "
        "the covariance of its terms in the CSV. `python -m benign regime` answers from this table: P(side) = "
        "Phi((log ||mu|| - log ||mu||*) / sigma), and its interval from the law's.",
    ]
    write(table, display, header, stem)
    return table
