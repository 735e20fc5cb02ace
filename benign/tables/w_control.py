"""The atlas's W-frozen control: how far training W moves each boundary's crossing, per d, n and
horizon (docs/regimes.md#what-the-atlass-boundaries-are-boundaries-of)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign.analysis.theory import Criteria, in_sweeps
from benign.analysis.w_control import totals, unpaired
from benign.analysis.w_control import w_control as control_table
from benign.synthetic import spec
from benign.tables.common import MISSING, PathLike, markdown_table, write


def _range(mean: float, low: float, high: float, digits: int) -> str:
    return MISSING if not np.isfinite(mean) else f"{mean:+.{digits}f} [{low:+.{digits}f}, {high:+.{digits}f}]"


def w_control(runs: pd.DataFrame, curves: pd.DataFrame, control_runs: pd.DataFrame, control_curves: pd.DataFrame,
              atlas, control: str, horizons, regime: dict, stem: PathLike) -> pd.DataFrame:  # fmt: skip
    """One row per boundary, (d, n) and horizon of the control sweep ``control`` (the model
    token_p_w0) against its twin lines in the sweeps ``atlas`` (benign.analysis.w_control): the
    lines paired, their identical and moved brackets, and the shift of ln ||mu||* that training
    W makes, with its range, in ln ||mu|| and in grid steps."""
    table = control_table(runs, curves, control_runs, control_curves, atlas, control, horizons, Criteria(**regime))
    rows = [r for _, r in table.iterrows()]
    display = pd.DataFrame(
        {
            "Boundary": table["boundary"],
            "d": table["d"].map(lambda v: f"{v:g}"),
            "n": table["n"],
            "Horizon (time)": [f"{r['horizon']} ({r['time']:.3g})" for r in rows],
            "Lines paired (of the control's; closed in both)": [
                f"{r['lines']} (of {r['seeds']}; {r['closed']})" for r in rows
            ],
            "Identical brackets": table["identical"],
            "Moved beyond their own": table["moved"],
            "Shift of ln ‖μ‖*, trained - frozen: mean [range]": [
                _range(r["shift_mean"], r["shift_min"], r["shift_max"], 3) for r in rows
            ],
            "In grid steps": [_range(r["shift_steps"], r["shift_steps_min"], r["shift_steps_max"], 2) for r in rows],
        }
    )
    summed = totals(table).set_axis(
        ["Boundary", "Horizon", "Pairs (independent lines, every d)", "Identical", "Moved beyond their own"], axis=1
    )
    missing = unpaired(table)
    header = [
        "## Synthetic data: what training W does to the atlas's boundaries",
        f"The control's fixed parameters: {spec.fixed_text(control_runs[in_sweeps(control_runs, [control])])}.",
        f"The control sweep {control!r} trains the model with W frozen at its initialisation W0 (p alone trained) on "
        "one line of the atlas per d, with the atlas's norms, step size, seeds, steps and logging. Each of its lines "
        "has a twin in the atlas (W and p trained) with the same data and the same W0: both draw them from streams "
        "named by seed, d, n and T. Per boundary and horizon, a line gives its crossing with W frozen and with W "
        "trained, each a bracket of neighbouring norms; 'identical' counts the pairs whose brackets are the same, "
        "'moved' those whose brackets are disjoint (training W moved the crossing beyond its own interval). The "
        "shift is ln ||mu||* trained minus frozen, between the brackets' geometric midpoints (pairs closed in both), "
        "and the same in steps of the line's norm grid (ln 2 on a factor-2 grid): negative where training W lowers "
        "the boundary. The seeds of a (d, n) share nothing with any other line: each row's lines are independent "
        "pairs, and the rows are per d because a d's pairs say nothing of another d's. A line is paired at a "
        "horizon only where both were read at the same logged step"
        + (f" ({missing} line-horizons of the control were not: their twins log on another schedule)." if missing
           else "."),
    ]  # fmt: skip
    footer = ["### Over every d", markdown_table(summed)]
    write(table, display, header, stem, footer)
    return table
