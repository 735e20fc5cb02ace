"""The selection boundaries at step 1, at the last horizon and at t = infinity, side by side; the
plateau's shift from the limit per (d, n) cell; where gradient descent's selection is the global
one (docs/regimes.md#the-limit)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign.analysis import limit as lim
from benign.analysis.theory import Criteria
from benign.tables.common import MISSING, PathLike, write


def _iv(r, name: str, digits: int = 3, signed: bool = False) -> str:
    value, low, high = r.get(name, np.nan), r.get(f"{name}_low", np.nan), r.get(f"{name}_high", np.nan)
    if not np.isfinite(value):
        return MISSING
    f = f"{{:{'+' if signed else ''}.{digits}f}}"
    ends = f" [{f.format(low)}, {f.format(high)}]" if np.isfinite(low) and np.isfinite(high) else " (no interval)"
    return f.format(value) + ends


def _setting(runs: pd.DataFrame) -> str:
    """The atlas's fixed parameters, as its tables state them."""
    parts = []
    for key in ("T", "rho", "eta", "sigma", "step_size", "integrator"):
        values = sorted(runs[key].dropna().unique().tolist()) if key in runs else []
        parts.append(f"{key} {', '.join(f'{v:g}' if isinstance(v, float) else str(v) for v in values) or MISSING}")
    return "; ".join(parts)


def _plateau(r) -> str:
    if not np.isfinite(r.get("plateau_shift", np.nan)):
        return MISSING
    return (f"{_iv(r, 'plateau_shift', signed=True)} ({r['plateau_cells']:.0f} cells, {r['plateau_pairs']:.0f} lines; "
            f"{r['plateau_moved']:.0f} disjoint): {r['plateau_words']} (tolerance ±{r['tolerance']:.3f})")  # fmt: skip


def boundary_limits(runs: pd.DataFrame, labels: pd.DataFrame, criteria: Criteria, limit: pd.DataFrame,
                    stem: PathLike) -> pd.DataFrame:  # fmt: skip
    """One row per selection boundary and stage (benign.analysis.limit.stages)."""
    table = lim.stages(runs, labels, limit, criteria)
    rows = [r for _, r in table.iterrows()]
    horizon = lambda r: "∞" if not np.isfinite(r["horizon"]) else f"{r['horizon']:g}"  # noqa: E731
    display = pd.DataFrame(
        {
            "Boundary": table["boundary"],
            "Stage (steps)": [f"{r['stage']} ({horizon(r)})" for r in rows],
            "Crossings (bracketed)": [f"{r['crossings']} ({r['bracketed']})" for r in rows],
            "a [95%]": [_iv(r, "a") for r in rows],
            "b [95%]": [_iv(r, "b") for r in rows],
            "c [95%]": [_iv(r, "c", 2) for r in rows],
            "Shift from the first step's law, ln [95%]": [_iv(r, "shift_from_law", signed=True) for r in rows],
            "Plateau minus limit, ln [95%]": [_plateau(r) for r in rows],
        }
    )
    last = int(labels["horizon"].max()) if len(labels) else 0
    header = [
        "## Synthetic data: the selection boundaries at step 1, at the last horizon and at the limit",
        f"The atlas's fixed parameters: {_setting(runs)}. Law (i), ||mu||* = c d^a n^b, fitted to the crossings "
        f"at step 1, at the last horizon ({last:g} steps, the plateau) and at t = infinity (the limit), each with the "
        "delete-one-(d, n)-line jackknife over the lines (Student's t over the lines). The limit is computed, not read "
        "off a plateau: on every atlas line (the same data, W0 and test set as its runs), the attention-SVM direction "
        "p^mm of a selection of training tokens (Tarzanagh et al. 2023), its softmax saturated: a test sample attends "
        "to argmax_t <W0^T x_t, p^mm>. With W fixed at W0, p / ||p|| tends to p^mm of the tokens gradient descent "
        "holds. Two selections: the twin's, the tokens the line's W-frozen twin (the same run with W fixed at W0) "
        "attends to most at the last horizon, trained by the same flow and step size; and the global one, each "
        "training sample's token of highest score Y_i <x_it, nu>, which needs no run. The atlas trains W too, whose "
        "limit neither is: the W-frozen control (results/tables/w_control) shows how far training W moves the "
        "crossings up to the last horizon, not beyond it. Plateau minus limit: each line's "
        "crossing at the last horizon over its limit crossing (ln of bracket midpoints), averaged over the seeds of a "
        "(d, n) cell, then over the cells; 'at its limit' where the 95% interval lies within ± the tolerance, the lines' "
        "resolution in ln ||mu|| (the least shift the staggered brackets resolve), 'short of its limit' where it lies "
        "wholly outside, 'cannot tell' otherwise.",
    ]
    write(table, display, header, stem)
    return table


def limit_shifts(runs: pd.DataFrame, curves: pd.DataFrame, labels: pd.DataFrame, criteria: Criteria,
                 limit: pd.DataFrame, selection: pd.DataFrame, stem: PathLike) -> pd.DataFrame:  # fmt: skip
    """One row per selection boundary and (d, n) cell: the plateau's shift from the limit over the
    seeds, the limit's crossing beside the first step's law, and how many runs at the last horizon
    attend to the kinds of token the global selection picks."""
    shifts = lim.cell_shifts(runs, labels, limit, criteria)
    kinds = lim.reached(runs, curves, labels, selection)
    table = shifts.merge(kinds, on=["d", "n"], how="left")
    rows = [r for _, r in table.iterrows()]
    display = pd.DataFrame(
        {
            "Boundary": table["boundary"],
            "Limit of": table["selection"].map(lim.SELECTIONS),
            "d": table["d"].map(lambda v: f"{v:.0e}"),
            "n": table["n"],
            "Seeds (closed; disjoint)": [f"{r['seeds']} ({r['closed']}; {r['moved']})" for r in rows],
            "Plateau minus limit, ln [95% over seeds]": [_iv(r, "shift", signed=True) for r in rows],
            "Limit's ‖μ‖* / first step's law": [
                f"{r['limit_crossing'] / r['law_crossing']:.3f}" if np.isfinite(r["limit_crossing"]) else MISSING
                for r in rows
            ],
            "Law's omitted signal term, ln ‖μ‖*": table["law_omitted"].map(lambda v: f"{v:+.3f}"),
            "Samples off the global selection (mean share)": table["differs"].map(lambda v: f"{v:.3f}"),
            "cos(twin's p, p^mm), median": table["cosine"].map(lambda v: f"{v:.3f}"),
            "Atlas runs with the global selection's kinds: all; every flipped label fitted": [
                f"{r['same']:.0f} of {r['runs']:.0f}; {r['overfitting_same']:.0f} of {r['overfitting_runs']:.0f}"
                if np.isfinite(r["runs"])
                else MISSING
                for r in rows
            ],
        }
    )
    last = int(labels["horizon"].max()) if len(labels) else 0
    header = [
        "## Synthetic data: the plateau's shift from the limit, per cell",
        f"The atlas's fixed parameters: {_setting(runs)}. Per selection boundary, selection and (d, n) cell: the shift "
        f"of each line's crossing at {last:g} steps from its computed limit (ln of bracket midpoints; the cell's seeds "
        "are independent draws, so the interval is Student's t over them), how many seeds' brackets are closed at "
        "both and how many are disjoint, the limit's crossing over the first step's closed-form law at the cell, the "
        "size of the term that law leaves out (the shift of its crossing were the query's signal part kept in its "
        "norm: docs/regimes.md#the-first-step), the "
        "share of training samples on which the selection differs from the global one, and the median cosine of the "
        "W-frozen twin's p at the last horizon with the selection's p^mm (over the norms evaluated: convergence in "
        "direction is slow, about 1 / log t). Last "
        "column: how many of the cell's atlas runs (W trained), at the last horizon, attend (most) to the relevant token on the "
        "same share of clean samples, and to each kind of token on the same shares of flipped samples, as the global "
        "selection does at their data; over all runs, and over the runs that fit every flipped label (the global "
        "selection fits them all; a run that leaves one unfitted cannot hold it). Equal shares are necessary for the "
        "same selection, not sufficient.",
    ]
    write(table, display, header, stem)
    return table
