"""The step check of the atlas: its crossings at the step divided by a factor, for that factor
times the steps, against the atlas's own, per boundary and d (docs/regimes.md#step-convergence)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign.tables.common import MISSING, PathLike, write

COLUMNS = ["boundary", "d", "horizon", "factor", "lines", "pairs", "closed_pairs", "moved", "shift", "shift_low",
           "shift_high", "margin", "verdict"]  # fmt: skip


def step_convergence(convergence: pd.DataFrame, stem: PathLike) -> pd.DataFrame:
    """One row per boundary and d of ``convergence`` (benign.analysis.convergence.step_convergence):
    the pairs compared, how many crossings moved beyond their own bracket, the mean shift in
    log ||mu|| with its 95% interval, the margin (the lines' resolution) and the verdict;
    ``in_fits`` is False where the d is left out of that boundary's fits."""
    table = convergence.reindex(columns=COLUMNS) if len(convergence) else pd.DataFrame(columns=COLUMNS)
    table = table.assign(in_fits=table["verdict"] == "converged")

    def shift(r) -> str:
        if not np.isfinite(r["shift"]):
            return MISSING
        return f"{r['shift']:.3f} [{r['shift_low']:.3f}, {r['shift_high']:.3f}]"

    rows = [r for _, r in table.iterrows()]
    display = pd.DataFrame(
        {
            "Boundary": table["boundary"],
            "d": table["d"].map(lambda v: f"{v:g}"),
            "Lines x seeds (closed in both; moved beyond their bracket)": [
                f"{r['pairs']} ({r['closed_pairs']}; {r['moved']})" for r in rows
            ],
            "Mean shift of log ||mu||* [95%]": [shift(r) for r in rows],
            "Margin (the lines' resolution)": [
                f"±{r['margin']:.3f}" if np.isfinite(r["margin"]) else MISSING for r in rows
            ],  # fmt: skip
            "Verdict": table["verdict"],
            "In the fits": table["in_fits"].map({True: "yes", False: "left out"}),
        }
    )
    horizon = f"{int(table['horizon'].iloc[0])} steps" if len(table) else "the longest horizon"
    factor = f"{int(table['factor'].iloc[0])}" if len(table) else "the factor"
    header = [
        "## Synthetic data: the atlas's step check",
        f"Each (d, n, seed) line of the check is trained again at the step size divided by {factor} for {factor} times "
        f"the steps, on the norms of its refined windows, and read at the same normalised time as the atlas at "
        f"{horizon}: the same data, a finer step. A pair's shift is the change of its crossing's bracket midpoint in "
        "log ||mu||; 'converged' where the 95% interval of the mean shift (Student's t over the pairs) lies within the "
        "resolution the lines' staggered brackets give a crossing; 'moves' where it lies wholly outside; 'cannot "
        "tell' otherwise or with under two pairs closed in both. A d that has not converged is left out of that "
        "boundary's fits (results/tables/regime_boundaries), which name it.",
    ]
    write(table, display, header, stem)
    return table
