"""The regime predictor's check off the atlas's grid: its coverage table
(docs/regimes.md#the-predictors-check)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign.analysis import predictor_check as check
from benign.synthetic import spec
from benign.tables.common import MISSING, PathLike, markdown_table, write


def _share(value: float, low: float, high: float) -> str:
    if not np.isfinite(value):
        return MISSING
    ends = f" [{low:.2f}, {high:.2f}]" if np.isfinite(low) and np.isfinite(high) else " (one cell: no interval)"
    return f"{value:.2f}{ends}"


def _signed(value: float, low: float, high: float, digits: int = 2) -> str:
    if not np.isfinite(value):
        return MISSING
    ends = f" [{low:+.{digits}f}, {high:+.{digits}f}]" if np.isfinite(low) and np.isfinite(high) else " (no interval)"
    return f"{value:+.{digits}f}{ends}"


def predictor_check(runs: pd.DataFrame, curves: pd.DataFrame, model: pd.DataFrame, sweep: str, regime: dict,
                    stem: PathLike) -> pd.DataFrame:  # fmt: skip
    """One row per boundary, horizon and region (inside the atlas's design or outside) of the
    check's cells (benign.analysis.predictor_check.sweep_coverage): seeds inside, straddling and
    outside the predictor's 95% interval of a new crossing, and the coverage bounds' means over
    the cells with their intervals; the bias (mean z over the cells, and in ln ||mu||*) with its
    power against a bias of 0.1 and its words, and the spread of z with its power against a true
    sd twice the predicted one and its words; worded and written, the per-cell rows following in
    the Markdown."""
    ok, cells, table = check.sweep_coverage(runs, curves, model, sweep, regime)
    rows = [r for _, r in table.iterrows()]
    display = pd.DataFrame(
        {
            "Boundary": table["boundary"],
            "Steps": table["horizon"],
            "Cells": [f"{r['cells']} ({r['region']})" for r in rows],
            "Seeds: inside / straddling / outside": [
                f"{r['inside']} / {r['straddles']} / {r['outside']}" for r in rows
            ],
            "Coverage, inside only [95%]": [
                _share(r["cover_low"], r["cover_low_low"], r["cover_low_high"]) for r in rows
            ],
            "Coverage, straddling counted [95%]": [
                _share(r["cover_high"], r["cover_high_low"], r["cover_high_high"]) for r in rows
            ],
            "Nominal 95%": table["verdict"],
            "Seeds scored": table["scored"],
            "Bias: mean z [95%] (ln ||mu||* [95%])": [
                f"{_signed(r['bias_z'], r['bias_z_low'], r['bias_z_high'])} "
                f"({_signed(r['bias_ln'], r['bias_ln_low'], r['bias_ln_high'], 3)})"
                for r in rows
            ],
            f"Power against a bias of {check.DELTA:g}": table["power"].map(lambda v: f"{v:.0%}"),
            "Bias": table["bias_verdict"],
            "Spread of z [95%] (1 if the sd is right)": [
                _share(r["spread_z"], r["spread_z_low"], r["spread_z_high"]) for r in rows
            ],
            f"Power against a true sd {check.FACTOR:g} x the predicted": table["calibration_power"].map(
                lambda v: f"{v:.0%}"
            ),
            "Spread": table["spread_verdict"],
        }
    )
    per_cell = pd.DataFrame(
        {
            "Boundary": cells["boundary"],
            "Steps": cells["horizon"],
            "d": cells["d"].map(lambda v: f"{v:g}"),
            "n": cells["n"],
            "Design": cells["design"].map({True: "inside", False: "outside (warned)"}),
            "Predicted ||mu||* [95% of a new crossing]": [
                f"{r.predicted:.3g} [{r.low:.3g}, {r.high:.3g}]" for r in cells.itertuples()
            ],
            "Seeds: inside / straddling / outside": [
                f"{r.inside} / {r.straddles} / {r.outside}" for r in cells.itertuples()
            ],
            "sd of a new crossing, ln (bracket width)": [
                f"{r.sd:.3g} ({r.width:.3g})" if np.isfinite(r.width) else f"{r.sd:.3g} (no closed bracket)"
                for r in cells.itertuples()
            ],
            "z (residual, ln), seeds scored": [
                f"{r.z:+.2f} ({r.residual:+.3f}), {r.scored}" if r.scored else f"{MISSING}, 0"
                for r in cells.itertuples()
            ],
        }
    )
    ds, ns = sorted(ok["d"].unique()), sorted(ok["n"].unique())
    header = [
        "## Synthetic data: the regime predictor checked off the grid",
        f"The runs' fixed parameters: {spec.fixed_text(ok)}.",
        f"Runs of the sweep {sweep} at (d, n) cells no fit reads (d {', '.join(f'{v:g}' for v in ds)}; n "
        f"{', '.join(str(int(v)) for v in ns)}), with seeds of their own, trained at the step size, integrator and "
        "tolerance the predictor names. Each seed's crossing of each boundary is bracketed between two neighbouring "
        "norms of the check's grid and set against the predictor's 95% interval of a new crossing at (d, n): "
        "'inside', 'outside', or 'straddling' (the grid cannot tell), so coverage is a pair of bounds. The units are "
        "the cells (a cell's seeds share whatever the law misses there): each bound is the mean of the cells' "
        "fractions, with Student's t over the cells (Clopper-Pearson where they do not differ). 'Below 95%' where even "
        "the upper bound's interval ends under it; '95% not rejected' only where the inside-only bound's does not "
        "(a weak word, docs/regimes.md); 'cannot tell (straddling)' where the straddling seeds would decide it. "
        "Each crossing is also scored: z = (ln crossing - predicted ln ||mu||*) / the predicted sd of a new crossing, "
        "a bracketed crossing read at its log-midpoint with the bracket's uniform variance (width^2 / 12, in ln) "
        "added to the sd's square; censored crossings (open brackets) are not scored. Bias: the mean z over the "
        "cells (each cell's seeds averaged first), with Student's t over the cells (beside it the same in ln "
        "||mu||*); the fit's own error is shared by every cell and reads as bias. Words from the bias's interval in ln "
        f"||mu||* against a margin of {check.DELTA:g}, symmetric: 'within ±{check.DELTA:g}' where it lies inside, "
        f"'biased beyond {check.DELTA:g}' where it lies wholly outside, else 'cannot tell' with the test's power "
        f"against a bias of {check.DELTA:g}; no word under 3 cells. The power is simulated on the row's "
        "own cells, seeds, bracket widths and predicted sds, the seeds of a cell sharing the whole of a new "
        "crossing's deviation (the least power). The spread of z is the sd of a seed's z, from the analysis of "
        "variance between and within the cells, chi-square on Satterthwaite's degrees of freedom: about 1 if the "
        "predicted sd is right. Its power is against a predicted sd too small by a factor of "
        f"{check.FACTOR:g} (the true sd of a new crossing {check.FACTOR:g} times the predicted one, no bias): the "
        "share of simulated checks of the row's own cells, seeds, bracket widths and predicted sds, bracketed and "
        "scored as the check is, the seeds of a cell sharing the whole of a new crossing's deviation (the least "
        "power), whose spread's interval lies wholly above 1. Where the brackets are wider than the predicted sd "
        "their uniform variance is most of z's and the seeds of a cell share a bracket, so the spread barely moves "
        "and the power is low. Words: 'spread > 1: the predicted sd too small' where the interval lies above 1, "
        "'spread < 1: the predicted sd too large' where it lies below, else 'cannot tell' with that power; an "
        "interval holding 1 is not read as 'calibrated'. Cells below the atlas's design region d >= k n^2, where "
        "the predictor warns, are reported apart.",
    ]
    write(table, display, header, stem, footer=["### Per cell", markdown_table(per_cell)])
    return table
