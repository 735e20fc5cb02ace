"""The exponent of n per boundary and horizon, beside the theorem's, the first step's and a log
factor, with its local slopes, and the flipped samples' own crossings (docs/regimes.md#the-n-laws)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from benign.analysis.n_law import SAMPLES
from benign.analysis.n_law import n_laws as n_law_table
from benign.analysis.theory import Criteria
from benign.synthetic import spec
from benign.tables.common import MISSING, PathLike, write


def _iv(r, name: str, digits: int = 3) -> str:
    value, low, high = r.get(name, np.nan), r.get(f"{name}_low", np.nan), r.get(f"{name}_high", np.nan)
    if not np.isfinite(value):
        return MISSING
    ends = f" [{low:+.{digits}f}, {high:+.{digits}f}]" if np.isfinite(low) and np.isfinite(high) else " (no interval)"
    return f"{value:+.{digits}f}{ends}"


def holds(r, value: float) -> str:
    """Whether b's 95% interval holds ``value``: "inside" or "outside" (— without an interval)."""
    low, high = r.get("b_low", np.nan), r.get("b_high", np.nan)
    if not (np.isfinite(value) and np.isfinite(low) and np.isfinite(high)):
        return MISSING
    return "inside" if low <= value <= high else "outside"


def _slopes(r, names: list[str]) -> str:
    return "; ".join(f"{name[1:]}: {_iv(r, name, 2)}" for name in names if np.isfinite(r.get(name, np.nan))) or MISSING


def _order(r) -> str:
    if r["boundary"] != SAMPLES:
        return MISSING
    predicted = f"{r['order_b']:+.3f}" if np.isfinite(r.get("order_b", np.nan)) else MISSING
    spread = f"spread {r['spread']:.2f}" if np.isfinite(r.get("spread", np.nan)) else "spread not resolved"
    return f"{_iv(r, 'label_minus_samples')}; predicted {predicted} ({spread})"


def n_laws(runs: pd.DataFrame, labels: pd.DataFrame, criteria: Criteria, stem: PathLike) -> pd.DataFrame:
    """One row per (boundary, horizon) of benign.analysis.n_law.n_laws; the Markdown gives b with
    its interval, where the theorem's and the first step's b lie against it, the local slopes,
    the log factor's gamma_n and, for the flipped samples' row, the label's b minus theirs."""
    table = n_law_table(runs, labels, criteria)
    slopes = [c for c in table.columns if re.fullmatch(r"b\[[^]]+\]", c)]
    rows = [r for _, r in table.iterrows()]
    display = pd.DataFrame(
        {
            "Boundary": table["boundary"],
            "Steps": table["horizon"],
            "Crossings (bracketed)": [f"{r['crossings']} ({r['bracketed']})" for r in rows],
            "b [95%]": [_iv(r, "b") for r in rows],
            "Theorem's b": [f"{r['theory_b']:g}: {holds(r, r['theory_b'])}" for r in rows],
            "First step's -1/4": [
                f"{holds(r, r['first_step_b'])}" if np.isfinite(r["first_step_b"]) else "(no first-step law)"
                for r in rows
            ],
            "Local slopes of ln n [95%]": [_slopes(r, slopes) for r in rows],
            "Theorem's b x (ln n)^γ: γ [95%] (AIC - law (i))": [
                f"{_iv(r, 'gamma_n', 2)} ({r['aic_nlog_minus_power']:+.1f})"
                if np.isfinite(r["aic_nlog_minus_power"])
                else MISSING
                for r in rows
            ],  # fmt: skip
            "Label's b - the samples' [95%]; order statistic's": [_order(r) for r in rows],
        }
    )
    ns = sorted(runs["n"].unique())
    span = np.log10(max(ns) / min(ns)) if ns else np.nan
    header = [
        "## Synthetic data: the exponent of n",
        f"The runs' fixed parameters: {spec.fixed_text(runs)}.",
        f"Law (i), ||mu||* = c d^a n^b, fitted to the atlas's crossings at each horizon, over n = "
        f"{', '.join(str(int(v)) for v in ns)} ({span:.2f} of a decade; intervals: the delete-one-(d, n)-cell "
        "jackknife, Student's t over the cells). The exponent of n is what the set-up does not give: the theorem has "
        "none for the harmful boundary and -1/2 for the not-overfitting one; the first step's law has -1/4 for the "
        "argmax and hard-max boundaries (docs/regimes.md#the-first-step). 'inside' and 'outside' say where each value "
        "lies against b's 95% interval, nothing more. Local slopes: one slope of ln n between neighbouring grid n "
        "(with a over d). The log factor: the theorem's b held, times (ln n)^γ, γ fitted (its AIC minus law (i)'s: "
        "negative favours it).",
        f"'{SAMPLES}': every flipped sample's own crossing (the j-th largest of a line's k = eta n flipped samples "
        "is where fewer than j stay fitted), fitted as one law. The not-overfitting label (at least half fitted) is "
        "the ceil(k/2)-th of them, an order statistic whose rank changes with n; the last column gives the label's b "
        "minus the samples' (jackknife interval) and what independent normal samples with the lines' measured "
        "spread would predict for it (docs/regimes.md#the-n-laws).",
    ]
    write(table, display, header, stem)
    return table
