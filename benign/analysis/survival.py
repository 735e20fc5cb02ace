"""The fit time and the generalization time as survival times (docs/regimes.md#delay).

Each run has a fit time (its flipped labels fitted from then on) and a generalization time
(attention selecting the relevant token at test time from then on), benign.analysis.milestones. A time is
known only between two logged steps, (previous logged step, step], and a time the horizon does
not reach is right-censored, (horizon, inf): every run is kept. lifelines fits:
- Kaplan-Meier curves of each time per SNR band (the time first seen at a logged step,
  right-censored at the horizon);
- Weibull accelerated-failure-time regressions of log time on SNR, on 1/SNR^2 (two
  exponential forms) and on log SNR (a power law), each with log n and log d, by
  interval-censored maximum likelihood; AIC says which form fits better;
- each run's delay, its generalization time less its fit time, interval-censored from the two
  times' intervals (right-censored where it has not generalized by the horizon), as a
  Kaplan-Meier curve per SNR band and a regression of its own.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

TIMES = {"fit_noisy": "fit time", "generalized": "generalization time"}
# the covariate whose effect on log time is fitted: two exponential forms (log t linear in SNR,
# or in 1/SNR^2) and a power law (log t linear in log SNR: t ~ SNR^coef)
FORMS = {"snr": "SNR", "inv_snr2": "1/SNR^2", "log_snr": "log SNR"}
FIRST_LOW = 0.5  # the lower end of a time reached at the first logged step (step 0 or 1)


def intervals(runs: pd.DataFrame, curves: pd.DataFrame, time: str) -> pd.DataFrame:
    """Per ok run with the milestone ``time``: lower and upper ends of the interval holding it,
    (previous logged step, step] for an event and (horizon, inf) when censored, with snr, n, d."""
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
            low, high = (float(before[-1]) if len(before) and before[-1] > 0 else FIRST_LOW), max(step, FIRST_LOW)
        rows.append({"run_id": run.run_id, "lower": low, "upper": high, "censored": censored,
                     "snr": run.snr, "n": run.n, "d": run.d, "signal_norm": run.signal_norm})  # fmt: skip
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


def aft(times: pd.DataFrame, form: str):
    """A lifelines WeibullAFTFitter of log time on :func:`covariates`, by interval-censored
    maximum likelihood; None where every time is censored (nothing to fit)."""
    from lifelines import WeibullAFTFitter

    if times["censored"].all() or len(times) < 5:
        return None
    model = WeibullAFTFitter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit_interval_censoring(covariates(times, form), "lower", "upper")
    return model


def aft_rows(times: pd.DataFrame, time: str) -> list[dict]:
    """Every form's fit of one time as table rows: each covariate's coefficient on log time with
    its 95% interval, the form's AIC, and whether it is the better form. A form whose likelihood
    lifelines cannot maximise (its ConvergenceError) gets one row, covariate "x", with no numbers
    and ``converged`` False: reported, not dropped, and not compared."""
    from lifelines.exceptions import ConvergenceError

    fits, failed = {}, []
    for form in FORMS:
        try:
            fits[form] = aft(times, form)
        except ConvergenceError:
            failed.append(form)
    aics = {form: m.AIC_ for form, m in fits.items() if m is not None}
    best = min(aics, key=aics.get) if aics else None
    rows = [{"time": time, "form": form, "covariate": "x", "coef": np.nan, "coef_low": np.nan, "coef_high": np.nan,
             "aic": np.nan, "better_form": False, "runs": len(times), "censored": int(times["censored"].sum()),
             "converged": False} for form in failed]  # fmt: skip
    for form, model in fits.items():
        if model is None:
            continue
        summary = model.summary.loc["lambda_"]
        for covariate, r in summary.iterrows():
            rows.append({"time": time, "form": form, "covariate": covariate, "coef": r["coef"],
                         "coef_low": r["coef lower 95%"], "coef_high": r["coef upper 95%"], "aic": model.AIC_,
                         "better_form": form == best, "runs": len(times), "censored": int(times["censored"].sum()),
                         "converged": True})  # fmt: skip
    return rows


def band_medians(runs: pd.DataFrame, curves: pd.DataFrame, bands: int) -> pd.DataFrame:
    """Per SNR band (quantiles of the runs' log SNR): runs, censored counts and the Kaplan-Meier
    median of each time (inf where under half the runs reach it by the horizon), the difference
    of the two medians (``delay``), and the Kaplan-Meier median of the runs' own delays
    (:func:`delays`, ``run_delay_*``)."""
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
    stats = {b: (len(g), int(g["censored"].sum()), float(delay_kaplan_meier(g, "delay").median_survival_time_))
             for b, g in per_run.groupby("band")}  # fmt: skip
    for j, name in enumerate(("runs", "censored", "median")):
        table[f"run_delay_{name}"] = [stats.get(b, (0, 0, np.nan))[j] for b in table["band"]]
    return table


def delays(runs: pd.DataFrame, curves: pd.DataFrame) -> pd.DataFrame:
    """Per ok run that fits its flipped labels by the horizon: its delay, the generalization time
    less the fit time, between ``lower`` = max(generalization's lower end - fit's upper end, 0)
    and ``upper`` = generalization's upper end - fit's lower end (inf where it has not
    generalized: right-censored), with ``first`` the delay as the logged steps show it (clipped
    at 0: attention selecting before the labels are fitted counts as no delay), and snr, n, d."""
    fit = intervals(runs, curves, "fit_noisy").set_index("run_id")
    gen = intervals(runs, curves, "generalized").set_index("run_id")
    both = fit[~fit["censored"]].merge(gen[["lower", "upper", "censored"]], left_index=True, right_index=True,
                                       suffixes=("", "_gen"))  # fmt: skip
    lower = np.maximum(both["lower_gen"] - both["upper"], 0.0)
    upper = np.where(both["censored_gen"], np.inf, np.maximum(both["upper_gen"] - both["lower"], FIRST_LOW))
    first = np.maximum(np.where(both["censored_gen"], both["lower_gen"], both["upper_gen"]) - both["upper"], 0.0)
    return pd.DataFrame({"run_id": both.index, "lower": lower.to_numpy(), "upper": upper, "first": first,
                         "censored": both["censored_gen"].to_numpy(bool), "snr": both["snr"].to_numpy(),
                         "n": both["n"].to_numpy(), "d": both["d"].to_numpy()})  # fmt: skip


def delay_kaplan_meier(delay: pd.DataFrame, label: str):
    """A lifelines KaplanMeierFitter of per-run delays (:func:`delays`): each the delay the logged
    steps show, right-censored where the run has not generalized by the horizon."""
    from lifelines import KaplanMeierFitter

    return KaplanMeierFitter(label=label).fit(delay["first"], event_observed=~delay["censored"].to_numpy(bool))
