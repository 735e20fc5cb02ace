"""The fit time and the generalization time as survival times (docs/regimes.md#delay).

Each run has a fit time (its flipped labels fitted from then on) and a generalization time
(attention selecting the relevant token at test time from then on), benign.analysis.milestones. A time is
known only between two logged steps, (previous logged step, step], and a time the horizon does
not reach is right-censored, (horizon, inf): every run is kept. Runs are grouped by where they
head: the hard-max readout's test error at the horizon says whether attention selects the
relevant token once its softmax saturates (benign once the labels are fitted) or not (harmful:
such a run never generalizes, and mixing it in would make a cure look like a slow time). Fitted:
- Kaplan-Meier curves of each time per SNR band (lifelines; the time first seen at a logged
  step, right-censored at the horizon);
- log-normal accelerated-failure-time regressions of log time on SNR, on 1/SNR^2 (two
  exponential forms) and on log SNR (a power law), each with log n and log d, by
  interval-censored maximum likelihood (benign.analysis.interval_censored), per group, the
  intervals over (d, n) cells (the delete-one-cell jackknife: log d and log n vary only across
  cells, whose seeds share the model's miss there), or over (d, n, seed) lines where there are
  under 3 cells; AIC says which form fits better;
- each run's delay, the ratio of its generalization time to its fit time, interval-censored from
  the two times' intervals (right-censored where it has not generalized), a ratio under 1 (selection
  before the fit) kept as it is: its regression, and per SNR band the median delay in steps and
  how many runs select before they fit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import t as student

from benign.analysis import interval_censored as ic

TIMES = {"fit_noisy": "fit time", "generalized": "generalization time"}
# the covariate whose effect on log time is fitted: two exponential forms (log t linear in SNR,
# or in 1/SNR^2) and a power law (log t linear in log SNR: t ~ SNR^coef)
FORMS = {"snr": "SNR", "inv_snr2": "1/SNR^2", "log_snr": "log SNR"}
FIRST_LOW = 0.5  # a time first seen at the first logged step (0 or 1) is at most this, or that step
FLOOR = 1e-3  # the least scatter of log time the regressions allow (the logged steps resolve far coarser)


def intervals(runs: pd.DataFrame, curves: pd.DataFrame, time: str) -> pd.DataFrame:
    """Per ok run with the milestone ``time``: lower and upper ends of the interval holding it,
    (previous logged step, step] for an event ((0, step] at the first logged step) and (horizon,
    inf) when censored, with snr, n, d and seed."""
    runs = runs[(runs["status"] == "ok") & runs[f"{time}_step"].notna()]
    logged = curves[curves["run_id"].isin(runs["run_id"])].groupby("run_id")["step"].apply(np.sort)
    rows = []
    for run in runs.itertuples():
        step, censored = float(getattr(run, f"{time}_step")), bool(getattr(run, f"{time}_censored"))
        steps = logged[run.run_id]
        if censored:
            low, high = step, np.inf
        else:
            before = steps[steps < step]
            # seen at the first logged step: known only to be at most it (left-censored)
            low, high = (float(before[-1]) if len(before) and before[-1] > 0 else 0.0), max(step, FIRST_LOW)
        rows.append({"run_id": run.run_id, "lower": low, "upper": high, "censored": censored,
                     "snr": run.snr, "n": run.n, "d": run.d, "seed": run.seed, "signal_norm": run.signal_norm})  # fmt: skip
    return pd.DataFrame(rows)


def snr_bands(snr: pd.Series, bands: int) -> pd.Series:
    """Quantile bands of log SNR, labelled by their SNR range."""
    codes = pd.qcut(np.log(snr), bands, duplicates="drop")
    return codes.map(lambda iv: f"{np.exp(iv.left):.3g}–{np.exp(iv.right):.3g}").astype(str)


def kaplan_meier(times: pd.DataFrame, label: str):
    """A lifelines KaplanMeierFitter of ``times`` (:func:`intervals`): each time the logged step
    at which it is first seen (the upper end of its interval), right-censored at the horizon."""
    from lifelines import KaplanMeierFitter

    durations = np.where(times["censored"], times["lower"], times["upper"])
    return KaplanMeierFitter(label=label).fit(durations, event_observed=~times["censored"].to_numpy(bool))


def covariates(times: pd.DataFrame, form: str) -> pd.DataFrame:
    """The regression's columns: lower, upper and the covariates of ``form`` (FORMS): x (SNR,
    1/SNR^2 or log SNR), and log n and log d where they vary."""
    x = {"snr": times["snr"], "inv_snr2": 1.0 / times["snr"] ** 2, "log_snr": np.log(times["snr"])}[form]
    out = pd.DataFrame({"lower": times["lower"], "upper": times["upper"], "x": x.to_numpy()})
    for axis in ("n", "d"):
        if times[axis].nunique() > 1:
            out[f"log_{axis}"] = np.log(times[axis].to_numpy(float))
    return out


def _units(times: pd.DataFrame) -> tuple[np.ndarray, str]:
    """The independent units of a regression: the (d, n) cells where there are at least 3 (log d
    and log n vary only across cells, and a cell's seeds share whatever the model misses there),
    else the (d, n, seed) lines (a line's runs share its draw)."""
    cells = times.groupby(["d", "n"]).ngroup().to_numpy()
    if len(np.unique(cells)) >= 3:
        return cells, "cells"
    return times.groupby(["d", "n", "seed"]).ngroup().to_numpy(), "lines"


def _jackknife(X: np.ndarray, lower: np.ndarray, upper: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """The delete-one-group jackknife covariance of the coefficients (sigma's entries NaN): the
    regression refitted with each group left out; a coefficient some refit cannot identify (its
    column constant without that group) gets no variance."""
    refits = []
    for g in np.unique(groups):
        keep = groups != g
        Xk = X[keep]
        identified = np.array([True, *(np.ptp(Xk[:, j]) > 0 for j in range(1, X.shape[1]))])
        params = np.full(X.shape[1], np.nan)
        params[identified] = ic.maximise(Xk[:, identified], np.zeros(keep.sum()), lower[keep], upper[keep], FLOOR)[:-1]
        refits.append(params)
    values = np.array(refits)
    k = len(values)
    dev = values - values.mean(axis=0)
    cov = np.full((X.shape[1] + 1, X.shape[1] + 1), np.nan)
    cov[:-1, :-1] = (k - 1) / k * dev.T @ dev  # NaN rows and columns where a refit lacked the term
    return cov


def regression(times: pd.DataFrame, form: str) -> dict | None:
    """A log-normal accelerated-failure-time regression of ``times`` (:func:`intervals`, or the
    ratios of :func:`delays`): log time ~ N(intercept + covariates of ``form``, sigma^2) by
    interval-censored maximum likelihood (benign.analysis.interval_censored), with 95% intervals
    over the independent units (:func:`_units`): the delete-one-(d, n)-cell jackknife where there
    are at least 3 cells, else the sandwich clustered by (d, n, seed) line, Student's t on G - 1.
    {"coef": {covariate: (value, low, high)}, "aic", "units", "unit"}; None where every time is
    censored or there are too few units."""
    if times.empty or times["censored"].all() or len(times) < 5:
        return None
    columns = covariates(times, form)
    X = np.column_stack([np.ones(len(columns)), columns.drop(columns=["lower", "upper"]).to_numpy(float)])
    names = ["Intercept", *columns.columns.drop(["lower", "upper"])]
    lower, upper = columns["lower"].to_numpy(float), columns["upper"].to_numpy(float)
    groups, unit = _units(times)
    count = len(np.unique(groups))
    if count < 3:
        return None
    offset = np.zeros(len(X))
    params = ic.maximise(X, offset, lower, upper, FLOOR)
    if unit == "cells":
        cov = _jackknife(X, lower, upper, groups)
    else:
        cov = ic.clustered_covariance(params, X, offset, lower, upper, groups, held=params[-1] <= np.log(FLOOR) + 1e-6)
    quantile = float(student.ppf(0.975, count - 1))
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))  # NaN where there is no variance: no interval
    loglik = -ic.negative_log_likelihood(params, X, offset, lower, upper)[0]
    coef = {n: (float(params[i]), float(params[i] - quantile * se[i]), float(params[i] + quantile * se[i]))
            for i, n in enumerate(names)}  # fmt: skip
    return {"coef": coef, "aic": float(2 * len(params) - 2 * loglik), "units": count, "unit": unit}


def regression_rows(times: pd.DataFrame, time: str, group: str) -> list[dict]:
    """Every form's :func:`regression` of one time of one group of runs as table rows: each
    covariate's coefficient on log time with its interval, the form's AIC, whether it is the
    better form; one row, not fitted, where nothing can be."""
    fits = {form: regression(times, form) for form in FORMS}
    aics = {form: f["aic"] for form, f in fits.items() if f is not None}
    best = min(aics, key=aics.get) if aics else None
    base = {
        "time": time,
        "group": group,
        "runs": len(times),
        "censored": int(times["censored"].sum()) if len(times) else 0,
    }
    if best is None:
        return [{**base, "form": "", "covariate": "", "coef": np.nan, "coef_low": np.nan, "coef_high": np.nan,
                 "aic": np.nan, "better_form": False, "units": 0, "unit": ""}]  # fmt: skip
    return [
        {**base, "form": form, "covariate": name, "coef": v, "coef_low": lo, "coef_high": hi, "aic": fit["aic"],
         "better_form": form == best, "units": fit["units"], "unit": fit["unit"]}
        for form, fit in fits.items() if fit is not None
        for name, (v, lo, hi) in fit["coef"].items()
    ]  # fmt: skip


def full_length(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs trained to their (d, n) line's full length. The refinement trains a norm only an
    early window needs to that window's horizon (benign.analysis.refinement), chosen because a
    crossing lies near it then: such a run's censoring is tied to its event time, and its last
    step is no long-time readout, so the times and their groups read the full-length runs only."""
    longest = runs.groupby(["d", "n"])["steps"].transform("max")
    return runs[runs["steps"] == longest]


def long_time_groups(runs: pd.DataFrame, hardmax_threshold: float) -> pd.Series:
    """Each run's group by its long-time readout at its last step: "selects" where the hard-max
    readout's test error is at most ``hardmax_threshold`` (the run heads for generalization:
    benign once it fits), "does not select" otherwise (harmful: it never generalizes)."""
    selects = runs["test_err_hardmax"].to_numpy(float) <= hardmax_threshold + 1e-9
    return pd.Series(np.where(selects, "selects", "does not select"), index=runs.index)


def band_medians(runs: pd.DataFrame, curves: pd.DataFrame, bands: int) -> pd.DataFrame:
    """Per SNR band (quantiles of the runs' log SNR): runs, censored counts and the Kaplan-Meier
    median of each time (inf where under half the runs reach it by the horizon), the difference
    of the two medians (``delay``), and of the runs' own delays (:func:`delays`): their count,
    how many are censored, their median in steps (signed; a censored delay counts as later than
    any seen) and how many select before they fit (``selection_first``)."""
    ok = runs[runs["status"] == "ok"]
    band = dict(zip(ok["run_id"], snr_bands(ok["snr"], bands)))
    low = ok.assign(band=ok["run_id"].map(band)).groupby("band")["snr"].min()
    table = pd.DataFrame({"band": low.index, "snr_low": low.to_numpy()})
    for time in TIMES:
        times = intervals(ok, curves, time)
        times = times.assign(band=times["run_id"].map(band))
        stats = {
            b: (len(g), int(g["censored"].sum()), float(kaplan_meier(g, time).median_survival_time_))
            for b, g in times.groupby("band")
        }
        for j, name in enumerate(("runs", "censored", "median")):
            table[f"{time}_{name}"] = [stats.get(b, (0, 0, np.nan))[j] for b in table["band"]]
    table = table.sort_values("snr_low").reset_index(drop=True)
    table["delay"] = table["generalized_median"] - table["fit_noisy_median"]
    per_run = delays(ok, curves)
    per_run = per_run.assign(band=per_run["run_id"].map(band))
    table = table.assign(run_delay_runs=0, run_delay_censored=0, run_delay_median=np.nan, selection_first=0)
    for b, g in per_run.groupby("band"):
        at = table["band"] == b
        seen = g[~g["censored"]]
        # the median signed delay, censored runs counted as later than any seen (inf where half are)
        ordered = np.sort(np.r_[seen["first"].to_numpy(float), np.full(len(g) - len(seen), np.inf)])
        table.loc[at, "run_delay_runs"] = len(g)
        table.loc[at, "run_delay_censored"] = len(g) - len(seen)
        table.loc[at, "run_delay_median"] = float(np.median(ordered)) if len(ordered) else np.nan
        table.loc[at, "selection_first"] = int((seen["first"] < 0).sum())
    return table


def delays(runs: pd.DataFrame, curves: pd.DataFrame) -> pd.DataFrame:
    """Per ok run that fits its flipped labels by the horizon: its delay as the ratio of its
    generalization time to its fit time, between ``lower`` = generalization's lower end over
    fit's upper end and ``upper`` = generalization's upper end over fit's lower end (inf where it
    has not generalized: right-censored). A ratio under 1 is attention selecting before the labels
    are fitted: kept as it is, a result, not a zero. ``first``: the delay in steps as the logged
    steps show it, negative where selection came first; with snr, n, d and seed."""
    fit = intervals(runs, curves, "fit_noisy").set_index("run_id")
    gen = intervals(runs, curves, "generalized").set_index("run_id")
    both = fit[~fit["censored"]].merge(gen[["lower", "upper", "censored"]], left_index=True, right_index=True,
                                       suffixes=("", "_gen"))  # fmt: skip
    lower = both["lower_gen"] / both["upper"]
    # a fit seen at the first logged step counts from half a step: a time of 0 has no ratio
    upper = np.where(both["censored_gen"], np.inf, both["upper_gen"] / np.maximum(both["lower"], FIRST_LOW))
    first = np.where(both["censored_gen"], both["lower_gen"], both["upper_gen"]) - both["upper"]
    return pd.DataFrame({"run_id": both.index, "lower": lower.to_numpy(), "upper": upper, "first": first,
                         "censored": both["censored_gen"].to_numpy(bool), "snr": both["snr"].to_numpy(),
                         "n": both["n"].to_numpy(), "d": both["d"].to_numpy(), "seed": both["seed"].to_numpy()})  # fmt: skip
