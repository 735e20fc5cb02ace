"""The generalization-times table: the fit time and the generalization time of every atlas run
as censored survival times, their log-normal AFT regressions on SNR, on 1/SNR^2 and on log SNR
with n and d per group of runs (by where they head), each run's signed delay between them, and
the medians per SNR band (docs/regimes.md#delay)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign.analysis import survival
from benign.synthetic import spec
from benign.tables.common import MISSING, PathLike, markdown_table, write

COVARIATES = {"x": "SNR or 1/SNR^2", "log_n": "log n", "log_d": "log d", "Intercept": "intercept"}


def generalization_times(runs: pd.DataFrame, curves: pd.DataFrame, stem: PathLike, bands: int,
                         regime: dict) -> pd.DataFrame:  # fmt: skip
    """The AFT coefficients (one row per time, group, form and covariate) and, below them in the
    Markdown, the per-band medians. ``runs``: the atlas runs annotated with milestones
    (benign.analysis.milestones.annotate), each once; ``regime`` (``synthetic.regime``): the
    hard-max threshold that groups them by where they head (benign.analysis.survival)."""
    runs = survival.full_length(runs[runs["status"] == "ok"])
    groups = survival.long_time_groups(runs, regime["hardmax_threshold"])
    rows = []
    for group in ("selects", "does not select"):
        mine = runs[groups == group]
        for time in survival.TIMES:
            rows += survival.regression_rows(survival.intervals(mine, curves, time), time, group)
        rows += survival.regression_rows(survival.delays(mine, curves), "delay", group)
    table = pd.DataFrame(rows, columns=["time", "group", "form", "covariate", "coef", "coef_low", "coef_high", "aic",
                                        "better_form", "runs", "censored", "units", "unit"])  # fmt: skip
    medians = survival.band_medians(runs, curves, bands)
    write(table, _display(table), _header(table, medians, regime, runs), stem)
    return table


def _display(table: pd.DataFrame) -> pd.DataFrame:
    """The coefficients as the Markdown shows them."""
    fitted = table["form"] != ""
    return pd.DataFrame(
        {
            "Runs heading for": table["group"].map(
                {"selects": "selection (hard-max)", "does not select": "no selection"}
            ),
            "Time": table["time"].map({**survival.TIMES, "delay": "delay (generalization / fit)"}),
            "Form": table["form"].map(lambda f: survival.FORMS.get(f, "not fitted: every time censored")),
            "Covariate": [
                survival.FORMS[f] if c == "x" else COVARIATES.get(c, c) if f else MISSING
                for f, c in zip(table["form"], table["covariate"])
            ],
            "Coefficient on log time [95%, over the units]": [
                f"{r.coef:.3g} [{r.coef_low:.3g}, {r.coef_high:.3g}]" if f else MISSING
                for r, f in zip(table.itertuples(), fitted)
            ],
            "AIC": [
                f"{a:.1f}" + (" (better)" if b else "") if np.isfinite(a) else MISSING
                for a, b in zip(table["aic"], table["better_form"])
            ],  # fmt: skip
            "Runs (censored; units)": [f"{r.runs} ({r.censored}; {r.units} {r.unit})" for r in table.itertuples()],
        }
    )


def _header(table: pd.DataFrame, medians, regime: dict, runs: pd.DataFrame) -> list[str]:
    """The heading, how the times and the regressions are read (with the lower-AIC form per time), and the medians."""
    names = {**survival.TIMES, "delay": "delay"}
    better = table[table["better_form"]].drop_duplicates(["group", "time"])
    words = "; ".join(f"{g}, {names[t]}: {survival.FORMS[f]}" for g, t, f in zip(better["group"], better["time"],
                                                                                better["form"]))  # fmt: skip
    return [
        "## Synthetic data: fit and generalization times",
        f"The runs' fixed parameters: {spec.fixed_text(runs)}.",
        "Per atlas run, each once: the fit time (the first logged step from which the flipped labels stay fitted) and "
        "the generalization time (the first from which attention selects the relevant token at test time), known "
        "between two logged steps, and right-censored at the horizon where not reached: every run is kept. The runs "
        "are apart by where they head: the hard-max readout's test error at the horizon, at most "
        f"{regime['hardmax_threshold']:g} ('selects': benign once fitted) or not ('does not select': harmful, never "
        "generalizing). Log-normal accelerated-failure-time regressions of log time (interval-censored maximum "
        "likelihood; 95% intervals by the delete-one-(d, n)-cell jackknife, Student's t on the cells: log d and log n "
        "vary only across cells, and a cell's seeds share whatever the model misses there; where the runs span under "
        "3 cells, the sandwich clustered by (d, n, seed) line instead) on SNR, on 1/SNR^2 "
        "(two exponential forms) and on log SNR (a power law, time ~ SNR^coef), each with log n and log d; a negative "
        "coefficient shortens the time. The delay is each run's own: the ratio of its generalization time to its "
        "fit time, interval-censored from the two, right-censored where it has not generalized, a ratio under 1 "
        "(selection before the fit) kept as it is. Lowest AIC: " + (words or MISSING) + ".",
        "Kaplan-Meier medians per SNR band (inf: under half the band's runs reach it by the horizon), the difference "
        "of the two medians, and the runs' own delays in steps (signed: negative where attention selects before "
        "the labels are fitted):\n\n" + _medians_markdown(medians),
    ]


MEDIAN_COLUMNS = ("SNR band", "fit time: median (runs, censored)", "generalization time: median (runs, censored)",
                  "difference of medians", "per-run delay: median (runs, censored)", "selection before the fit")  # fmt: skip


def _medians_markdown(medians: pd.DataFrame) -> str:
    def step(v):
        return MISSING if not np.isfinite(v) and np.isnan(v) else ("not reached" if np.isinf(v) else f"{v:.0f}")

    rows = [
        [r.band, f"{step(r.fit_noisy_median)} ({r.fit_noisy_runs}, {r.fit_noisy_censored})",
         f"{step(r.generalized_median)} ({r.generalized_runs}, {r.generalized_censored})",
         MISSING if not np.isfinite(r.delay) else f"{r.delay:.0f}",
         f"{step(r.run_delay_median)} ({r.run_delay_runs}, {r.run_delay_censored})", r.selection_first]
        for r in medians.itertuples()
    ]  # fmt: skip
    return markdown_table(pd.DataFrame(rows, columns=list(MEDIAN_COLUMNS)))
