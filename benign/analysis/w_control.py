"""The atlas's W-frozen control (docs/regimes.md#what-the-atlass-boundaries-are-boundaries-of):
each boundary's crossing on a line of the atlas (W and p trained) against the same line with W
frozen at W0 (the model token_p_w0, p trained), paired.

A control line and its twin atlas line share their data and W0 (benign.synthetic.gram names a
line's streams by seed, d, n and T, not by the model), so at a horizon the line gives its
crossing twice, and the difference is what training W does to it. The pairing is
benign.analysis.convergence.paired_crossings, on the norms both have; a line is paired at a
horizon only where both were read at the same logged step (their runs log on one schedule). A
pair's brackets are identical, or moved beyond their own (disjoint), or overlap; its shift is
trained minus frozen between the brackets' geometric midpoints, in ln ||mu||* (both closed), and
in grid steps of the line's norms (ln 2 on the atlas's factor-2 grid). The seeds of a (d, n)
share nothing with any other line, so the rows are per (d, n): their lines are its seeds, each
one independent pair.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign.analysis.boundaries import BOUNDARIES, side_labels
from benign.analysis.convergence import paired_crossings
from benign.analysis.crossings import LINE
from benign.analysis.theory import Criteria, atlas_labels

COLUMNS = ["boundary", "d", "n", "horizon", "step", "time", "seeds", "lines", "closed", "identical", "moved",
           "shift_mean", "shift_min", "shift_max", "grid_step", "shift_steps", "shift_steps_min", "shift_steps_max"]  # fmt: skip


def line_steps(runs: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """Per horizon and (d, n, seed) line: the logged step its labels were read at (the latest of
    its runs') and its step size."""
    cells = labels.merge(runs[["run_id", *LINE, "step_size"]], on="run_id")
    return cells.groupby(["horizon", *LINE], as_index=False).agg(step=("step", "max"), step_size=("step_size", "max"))


def grid_steps(cells: pd.DataFrame) -> pd.DataFrame:
    """Per (d, n, seed) line of ``cells``: the median gap between neighbouring norms, in ln ||mu||."""

    def gap(norms: pd.Series) -> float:
        logs = np.unique(np.log(norms.to_numpy(float)))
        return float(np.median(np.diff(logs))) if len(logs) > 1 else np.nan

    return cells.groupby(LINE)["signal_norm"].agg(gap).rename("grid_step").reset_index()


def twin_pairs(trained_runs: pd.DataFrame, trained: pd.DataFrame, frozen_runs: pd.DataFrame,
               frozen: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:  # fmt: skip
    """The control's lines against their twins: (pairs, lines). ``trained``, ``frozen``: labels
    (benign.analysis.theory.regimes_at) of the atlas's runs and of the control's. ``lines``: per
    horizon, each control line's logged step, its twin's (NaN: none) and whether they are
    paired. ``pairs``: per boundary, horizon and paired line, paired_crossings(frozen, trained)
    (``shift`` trained minus frozen; ``moved``: disjoint brackets) with ``identical`` brackets,
    the line's ``grid_step``, ``step`` and ``step_size``."""
    twins = line_steps(trained_runs, trained).drop(columns="step_size").rename(columns={"step": "twin_step"})
    lines = line_steps(frozen_runs, frozen).merge(twins, on=["horizon", *LINE], how="left")
    lines["paired"] = lines["step"] == lines["twin_step"]
    found = []
    for horizon, at in lines[lines["paired"]].groupby("horizon"):
        keep = at[LINE]
        for name, column, negate, *_ in BOUNDARIES:
            sides = [side_labels(labels[labels["horizon"] == horizon], runs, column, negate).merge(keep, on=LINE)
                     for labels, runs in ((frozen, frozen_runs), (trained, trained_runs))]  # fmt: skip
            pairs = paired_crossings(*sides)
            if pairs.empty:
                continue
            identical = (pairs["lower"] == pairs["lower_other"]) & (pairs["upper"] == pairs["upper_other"])
            found.append(pairs.assign(boundary=name, horizon=int(horizon), identical=identical)
                         .merge(grid_steps(sides[0]), on=LINE, how="left")
                         .merge(at[[*LINE, "step", "step_size"]], on=LINE, how="left"))  # fmt: skip
    pairs = pd.concat(found, ignore_index=True) if found else pd.DataFrame(columns=["boundary", "horizon", *LINE])
    return pairs, lines


def shift_table(pairs: pd.DataFrame, lines: pd.DataFrame) -> pd.DataFrame:
    """One row per boundary, (d, n) and horizon of the control (:func:`twin_pairs`): the logged
    step and the time (step size x horizon), the control's seeds and the lines paired, closed in
    both, with identical brackets and moved beyond their own; the mean shift of ln ||mu||*
    (trained minus frozen) over the closed pairs with its range, and the same in grid steps."""
    rows = []
    for (horizon, d, n), at in lines.groupby(["horizon", "d", "n"]):
        paired = at[at["paired"]]
        step = float(paired["step"].max()) if len(paired) else np.nan
        for name, *_ in BOUNDARIES:
            group = pairs[(pairs["boundary"] == name) & (pairs["horizon"] == horizon) & (pairs["d"] == d)
                          & (pairs["n"] == n)] if len(pairs) else pairs  # fmt: skip
            shift = group["shift"].dropna().to_numpy(float) if len(group) else np.array([])
            grid = float(np.median(group["grid_step"])) if len(group) else np.nan
            mean, low, high = (f(shift) if len(shift) else np.nan for f in (np.mean, np.min, np.max))
            rows.append({"boundary": name, "d": float(d), "n": int(n), "horizon": int(horizon), "step": step,
                         "time": float(horizon * at["step_size"].max()), "seeds": len(at), "lines": len(group),
                         "closed": len(shift), "identical": int(group["identical"].sum()) if len(group) else 0,
                         "moved": int(group["moved"].sum()) if len(group) else 0, "shift_mean": mean,
                         "shift_min": low, "shift_max": high, "grid_step": grid, "shift_steps": mean / grid,
                         "shift_steps_min": low / grid, "shift_steps_max": high / grid})  # fmt: skip
    order = {name: k for k, (name, *_) in enumerate(BOUNDARIES)}
    table = pd.DataFrame(rows, columns=COLUMNS)
    return table.sort_values(["boundary", "horizon", "d"], key=lambda c: c.map(order) if c.name == "boundary" else c,
                             kind="stable").reset_index(drop=True)  # fmt: skip


def w_control(runs: pd.DataFrame, curves: pd.DataFrame, control_runs: pd.DataFrame, control_curves: pd.DataFrame,
              atlas, control: str, horizons, criteria: Criteria) -> pd.DataFrame:  # fmt: skip
    """:func:`shift_table` of the ok runs of the sweeps ``atlas`` (the paper's model) against
    those of the control sweep ``control`` (W frozen at W0), both labelled at ``horizons``."""
    trained_runs, trained = atlas_labels(runs, curves, atlas, horizons, criteria)
    frozen_runs, frozen = atlas_labels(control_runs, control_curves, [control], horizons, criteria)
    return shift_table(*twin_pairs(trained_runs, trained, frozen_runs, frozen))


TOTALS = ["boundary", "horizon", "lines", "identical", "moved"]


def totals(table: pd.DataFrame) -> pd.DataFrame:
    """Per boundary and horizon, the pairs of :func:`w_control`'s table summed over every d: its
    lines, identical brackets and moved ones."""
    if not len(table):
        return pd.DataFrame(columns=TOTALS)
    return table.groupby(["boundary", "horizon"], sort=False)[TOTALS[2:]].sum().reset_index()


def unpaired(table: pd.DataFrame) -> int:
    """The control's line-horizons with no twin read at the same logged step (their twins log on
    another schedule): per (d, n, horizon), its seeds less its paired lines."""
    return int((table["seeds"] - table["lines"]).groupby([table["d"], table["n"], table["horizon"]]).max().sum())
