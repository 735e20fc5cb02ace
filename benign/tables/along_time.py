"""The boundaries along time: law (i) at every horizon from the first step, the drift between
horizons and the first step's law beside the selection labels (docs/regimes.md#along-time)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign.analysis.along_time import boundary_path, settled_from
from benign.analysis.theory import Criteria
from benign.synthetic import spec
from benign.tables.common import MISSING, PathLike, markdown_table, write


def _iv(r, name: str, digits: int = 3, signed: bool = False) -> str:
    value, low, high = r[name], r.get(f"{name}_low", np.nan), r.get(f"{name}_high", np.nan)
    if not np.isfinite(value):
        return MISSING
    f = f"{{:{'+' if signed else ''}.{digits}f}}"
    ends = f" [{f.format(low)}, {f.format(high)}]" if np.isfinite(low) and np.isfinite(high) else " (no interval)"
    return f.format(value) + ends


WORDS = {"settled": "within the resolution", "moves": "moves", "cannot tell": "cannot tell"}


def _drift(r) -> str:
    words = WORDS.get(r.get("drift_verdict"), MISSING)
    if not np.isfinite(r.get("drift", np.nan)):
        return words
    return f"{_iv(r, 'drift', signed=True)} ({r['drift_pairs']:.0f} pairs, {r['drift_lines']:.0f} lines): {words}"


def _law(r) -> str:
    if not np.isfinite(r.get("law_a", np.nan)):
        return MISSING
    return f"c {r['law_c']:.2f}, a {r['law_a']:.3f}, b {r['law_b']:.3f}"


def boundaries_along_time(runs: pd.DataFrame, labels: pd.DataFrame, criteria: Criteria, stem: PathLike) -> pd.DataFrame:
    """One row per (boundary, horizon) of benign.analysis.along_time.boundary_path, with each
    boundary's ``settled_from``; the Markdown words each exponent by its interval alone."""
    table = boundary_path(runs, labels, criteria)
    table["settled_from"] = table["boundary"].map(settled_from(table))
    rows = [r for _, r in table.iterrows()]
    display = pd.DataFrame(
        {
            "Boundary": table["boundary"],
            "Steps": table["horizon"],
            "Time": table["time"].map(lambda v: f"{v:.3g}" if np.isfinite(v) else MISSING),
            "Crossings (bracketed)": [f"{r['crossings']} ({r['bracketed']})" for r in rows],
            "a [95%]": [_iv(r, "a") for r in rows],
            "b [95%]": [_iv(r, "b") for r in rows],
            "c [95%]": [_iv(r, "c", 2) for r in rows],
            "Drift of ln ‖μ‖* per decade of time since the previous horizon [95%]": [_drift(r) for r in rows],
            "Shift since the reference horizon, ln [95%]": [_iv(r, "since_shift", signed=True) for r in rows],
            "Shift from the first step's law, ln [95%]": [_iv(r, "shift_from_law", signed=True) for r in rows],
        }
    )
    firsts, lasts = table.drop_duplicates("boundary"), table.drop_duplicates("boundary", keep="last")
    summary = pd.DataFrame(
        {
            "Boundary": firsts["boundary"],
            "Theory (a, b)": [f"{r['theory_a']:g}, {r['theory_b']:g}" for _, r in firsts.iterrows()],
            "At step 1: a, b": [f"{_iv(r, 'a')}; {_iv(r, 'b')}" for _, r in firsts.iterrows()],
            "First step's law over the design": [_law(r) for _, r in firsts.iterrows()],
            "Drift within the resolution per decade from (steps)": firsts["settled_from"].map(
                lambda v: f"{v:g}" if np.isfinite(v) else "never"
            ),
            "Shift from the reference to the last horizon, ln [95%]": [
                _iv(r, "since_shift", signed=True) for _, r in lasts.iterrows()
            ],
        }
    )
    span = f"{table['horizon'].min():g} to {table['horizon'].max():g} steps" if len(table) else "no horizon"
    header = [
        "## Synthetic data: the boundaries along time",
        f"The runs' fixed parameters: {spec.fixed_text(runs)}.",
        f"Law (i), ||mu||* = c d^a n^b, fitted to the atlas's crossings at every horizon from {span} (intervals: "
        "the delete-one-(d, n)-line jackknife, Student's t over the lines). An exponent already present at step 1 "
        "is the set-up's, not the dynamics': the first step's law (docs/regimes.md#the-first-step) gives the "
        "argmax and hard-max boundaries (d / n)^(1/4) after one step of any size, and at a fixed step size every "
        "contour of an SNR-only quantity has a = 1/2. The shift from the first step's law is the mean over lines of "
        "ln(||mu||* / the law's ||mu||* at the line's (d, n)): how far training has moved the boundary since step 1. "
        "The drift compares the same lines' crossings at consecutive horizons, per decade of time (lines are the units; "
        "pairs whose brackets are not closed at both horizons are left out, and the pairs counted are given): "
        "'within the resolution' where its 95% interval lies within the lines' resolution per decade, an equivalence "
        "test per pair of horizons, not a proof of convergence: a drift below it adds up over decades, so the shift "
        "since the reference horizon (the first at or past 1000 steps) is given too, paired on the same lines.",
    ]
    footer = ["### Per boundary", markdown_table(summary)]
    write(table, display, header, stem, footer)
    return table
