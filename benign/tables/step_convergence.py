"""The step check of the atlas: its crossings at the step divided by a factor, for that factor
times the steps, against the atlas's own, per boundary and d (docs/regimes.md#step-convergence)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign.synthetic import spec
from benign.tables.common import MISSING, PathLike, markdown_table, write

COLUMNS = ["boundary", "d", "horizon", "factor", "lines", "pairs", "closed_pairs", "changed", "moved", "largest_shift",
           "verdict", "a_change", "a_change_low", "a_change_high", "b_change", "b_change_low", "b_change_high",
           "shift", "shift_low", "shift_high", "shift_lines", "shift_margin", "shift_verdict", "shift_grid"]  # fmt: skip


def _change(r, term: str) -> str:
    value, low, high = (r[f"{term}_change{s}"] for s in ("", "_low", "_high"))
    if not np.isfinite(value):
        return MISSING
    if low == high:  # every refit alike: the jackknife has nothing to vary, not a zero-width interval
        return f"{value:+.4f} (every line alike: no interval)"
    return f"{value:+.4f} [{low:+.4f}, {high:+.4f}]"


def _shift(r) -> str:
    """The paired shift's mean over lines, its interval (or what the grid resolves where every
    pair kept its bracket), and the equivalence words against the lines' resolution."""
    if not np.isfinite(r["shift"]):
        return f"{r['shift_verdict']} (under 3 lines with closed pairs)"
    if np.isfinite(r["shift_grid"]):
        interval = f"(every line alike: resolved to ±{r['shift_grid']:.3f})"
    else:
        interval = f"[{r['shift_low']:+.4f}, {r['shift_high']:+.4f}]"
    return f"{r['shift']:+.4f} {interval} ({r['shift_lines']:.0f} lines; margin ±{r['shift_margin']:.3f}): {r['shift_verdict']}"


def step_convergence(convergence: pd.DataFrame, runs: pd.DataFrame, stem: PathLike) -> pd.DataFrame:
    """One row per boundary and d of ``convergence`` (benign.analysis.convergence.step_convergence):
    the crossings compared (lines x seeds), how many were closed at both steps, changed bracket
    and moved beyond their own bracket, the largest change of a bracket's midpoint in ln ||mu||,
    the verdict, and the change of law (i)'s exponents at the finer step; ``in_fits`` is False
    where the d is left out of that boundary's fits. ``runs``: the atlas's, whose fixed parameters
    the header states."""
    table = convergence.reindex(columns=COLUMNS) if len(convergence) else pd.DataFrame(columns=COLUMNS)
    table = table.assign(in_fits=table["verdict"] == "converged")
    rows = [r for _, r in table.iterrows()]
    display = pd.DataFrame(
        {
            "Boundary": table["boundary"],
            "d": table["d"].map(lambda v: f"{v:g}"),
            "Crossings (closed at both steps; changed bracket; moved beyond their own)": [
                f"{r['pairs']} ({r['closed_pairs']}; {r['changed']}; {r['moved']})" for r in rows
            ],
            "Largest change, ln ||mu||*": [
                f"{r['largest_shift']:.3f}" if np.isfinite(r["largest_shift"]) else MISSING for r in rows
            ],  # fmt: skip
            "Verdict": table["verdict"],
            "In the fits": table["in_fits"].map({True: "yes", False: "left out"}),
        }
    )
    firsts = table.drop_duplicates("boundary")
    exponents = pd.DataFrame(
        {
            "Boundary": firsts["boundary"],
            "Change of a at the finer step [95%, lines' jackknife]": [_change(r, "a") for _, r in firsts.iterrows()],
            "Change of b [95%]": [_change(r, "b") for _, r in firsts.iterrows()],
            "Paired shift of ln ‖μ‖*, mean over lines [95%]: equivalence": [_shift(r) for _, r in firsts.iterrows()],
        }
    )
    horizon = f"{int(table['horizon'].iloc[0])} steps" if len(table) else "the longest horizon"
    factor = f"{int(table['factor'].iloc[0])}" if len(table) else "the factor"
    header = [
        "## Synthetic data: the atlas's step check",
        f"The atlas's fixed parameters: {spec.fixed_text(runs)}.",
        f"The check's seeds of each (d, n) line are trained again at the step size divided by {factor} for {factor} "
        f"times the steps, on the norms of their refined windows, and read at the same normalised time as the atlas "
        f"at {horizon}: the same data, a finer step. Each (d, n, seed) gives its crossing at both steps, on the same "
        "norms. A crossing has moved beyond its own interval where its two brackets are disjoint; a d 'converged' "
        "where no crossing of the check did, and 'moves' otherwise, and then it is left out of that boundary's fits "
        "(results/tables/regime_boundaries names it). A seed's bracket is a factor sqrt(2): a smaller move can go "
        "unseen. What a move would do to the claims is below: law (i) fitted to the check's crossings at each step, "
        "and the change of its exponents with the delete-one-line jackknife interval over the (d, n) lines. The "
        "paired shift is an equivalence test: each closed pair's shift of its bracket midpoint, averaged per (d, n) "
        "line, the mean over lines with its t interval, 'equivalent' where the interval lies within the lines' "
        "resolution, 'moves' where it lies outside; where every line's mean shift is the same (every pair kept its "
        "bracket, say) the interval would have no width, and the table gives instead what the grid resolves.",
    ]
    footer = ["### The exponents at the finer step", markdown_table(exponents)]
    write(table, display, header, stem, footer)
    return table
