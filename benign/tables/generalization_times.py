"""The generalization-times table: the fit time and the generalization time of every atlas run
as censored survival times, their Weibull AFT regressions on SNR, on 1/SNR^2 and on log SNR with
n and d, each run's delay between them, and the Kaplan-Meier medians per SNR band (docs/regimes.md#delay)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign.analysis import survival
from benign.tables.common import MISSING, PathLike, write

COVARIATES = {"x": "SNR or 1/SNR^2", "log_n": "log n", "log_d": "log d", "Intercept": "intercept"}


def generalization_times(runs: pd.DataFrame, curves: pd.DataFrame, stem: PathLike, bands: int) -> pd.DataFrame:
    """The AFT coefficients (one row per time, form and covariate) and, below them in the
    Markdown, the per-band Kaplan-Meier medians. ``runs``: the atlas runs annotated with
    milestones (benign.analysis.milestones.annotate), each once."""
    rows = []
    for time in survival.TIMES:
        rows += survival.aft_rows(survival.intervals(runs, curves, time), time)
    rows += survival.aft_rows(survival.delays(runs, curves), "delay")
    table = pd.DataFrame(rows, columns=["time", "form", "covariate", "coef", "coef_low", "coef_high", "aic",
                                        "better_form", "runs", "censored", "converged"])  # fmt: skip
    medians = survival.band_medians(runs, curves, bands)
    display = pd.DataFrame(
        {
            "Time": table["time"].map({**survival.TIMES, "delay": "delay (per run)"}),
            "Form": table["form"].map(survival.FORMS),
            "Covariate": [
                survival.FORMS[f] if c == "x" else COVARIATES.get(c, c)
                for f, c in zip(table["form"], table["covariate"])
            ],
            "Coefficient on log time [95%]": [
                f"{r.coef:.3g} [{r.coef_low:.3g}, {r.coef_high:.3g}]" if r.converged else "did not converge"
                for r in table.itertuples()
            ],
            "AIC": [
                f"{a:.1f}" + (" (better)" if b else "") if np.isfinite(a) else MISSING
                for a, b in zip(table["aic"], table["better_form"])
            ],  # fmt: skip
            "Runs (censored)": [f"{r.runs} ({r.censored})" for r in table.itertuples()],
        }
    )
    names = {**survival.TIMES, "delay": "delay"}
    better = {t: table.loc[(table["time"] == t) & table["better_form"], "form"] for t in names}
    words = "; ".join(
        f"{names[t]}: {survival.FORMS[f.iloc[0]]} fits best (lowest AIC)" for t, f in better.items() if len(f)
    )
    header = [
        "## Synthetic data: fit and generalization times",
        "Per atlas run, each once: the fit time (the first logged step from which the flipped labels stay fitted) and "
        "the generalization time (the first from which attention selects the relevant token at test time), known "
        "between two logged steps, and right-censored at the horizon where not reached: every run is kept. "
        "Weibull accelerated-failure-time regressions of log time (lifelines, interval-censored maximum likelihood) "
        "on SNR, on 1/SNR^2 (two exponential forms) and on log SNR (a power law, time ~ SNR^coef), each with log n "
        "and log d; a negative coefficient shortens the time. The delay is each run's own: its generalization time "
        "less its fit time, interval-censored from the two, right-censored where it has not generalized, over the "
        "runs that fit their flipped labels. " + (words + "." if words else ""),
        "Kaplan-Meier medians per SNR band (inf: under half the band's runs reach it by the horizon), the difference "
        "of the two medians, and the Kaplan-Meier median of the runs' own delays:\n\n" + _medians_markdown(medians),
    ]
    write(table, display, header, stem)
    return table


def _medians_markdown(medians: pd.DataFrame) -> str:
    def step(v):
        return MISSING if not np.isfinite(v) and np.isnan(v) else ("not reached" if np.isinf(v) else f"{v:.0f}")

    lines = ["| SNR band | fit time: median (runs, censored) | generalization time: median (runs, censored) | "
             "difference of medians | per-run delay: median (runs, censored) |", "|---|---|---|---|---|"]  # fmt: skip
    for r in medians.itertuples():
        delay = r.delay if np.isfinite(r.delay) else np.nan
        lines.append(
            f"| {r.band} | {step(r.fit_noisy_median)} ({r.fit_noisy_runs}, {r.fit_noisy_censored}) | "
            f"{step(r.generalized_median)} ({r.generalized_runs}, {r.generalized_censored}) | "
            f"{MISSING if np.isnan(delay) else f'{delay:.0f}'} | "
            f"{step(r.run_delay_median)} ({r.run_delay_runs}, {r.run_delay_censored}) |"
        )
    return "\n".join(lines)
