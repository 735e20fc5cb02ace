"""The selection boundaries at step 1, at the last horizon and at t = infinity, side by side; the
plateau's shift from the limit per (d, n) cell; where gradient descent's selection is the global
one (docs/regimes.md#the-limit)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign.analysis import limit as lim
from benign.analysis.theory import Criteria
from benign.synthetic import spec
from benign.tables.common import MISSING, PathLike, write


def _iv(r, name: str, digits: int = 3, signed: bool = False) -> str:
    value, low, high = r.get(name, np.nan), r.get(f"{name}_low", np.nan), r.get(f"{name}_high", np.nan)
    if not np.isfinite(value):
        return MISSING
    f = f"{{:{'+' if signed else ''}.{digits}f}}"
    ends = f" [{f.format(low)}, {f.format(high)}]" if np.isfinite(low) and np.isfinite(high) else " (no interval)"
    return f.format(value) + ends


def _shift(r) -> str:
    if r["kind"] != "shift" or not np.isfinite(r.get("shift", np.nan)):
        return MISSING
    words = f": {r['words']} (±{r['margin']:g})" if r.get("words") else ""
    return f"{_iv(r, 'shift', signed=True)}; per ln d {_iv(r, 'shift_per_ln_d', signed=True)}{words}"


def boundary_limits(runs: pd.DataFrame, labels: pd.DataFrame, criteria: Criteria, limit: pd.DataFrame, margin: float,
                    stem: PathLike) -> pd.DataFrame:  # fmt: skip
    """Per selection boundary, law (i) at each stage and the shifts between them
    (benign.analysis.limit.stages)."""
    table = lim.stages(runs, labels, limit, criteria, margin)
    rows = [r for _, r in table.iterrows()]
    horizon = lambda r: (
        "" if r["kind"] == "shift" else " (∞)" if not np.isfinite(r["horizon"]) else f" ({r['horizon']:g})"
    )  # noqa: E731
    fit = lambda r, f: f(r) if r["kind"] == "fit" else MISSING  # noqa: E731
    display = pd.DataFrame(
        {
            "Boundary": table["boundary"],
            "Stage (steps)": [f"{r['stage']}{horizon(r)}" for r in rows],
            "Crossings (bracketed)": [fit(r, lambda r: f"{r['crossings']:.0f} ({r['bracketed']:.0f})") for r in rows],
            "a [95%]": [fit(r, lambda r: _iv(r, "a")) for r in rows],
            "b [95%]": [fit(r, lambda r: _iv(r, "b")) for r in rows],
            "c [95%]": [fit(r, lambda r: _iv(r, "c", 2)) for r in rows],
            "Shift from the first step's law, ln [95%]": [
                fit(r, lambda r: _iv(r, "shift_from_law", signed=True)) for r in rows
            ],
            "Shift, ln [95%]; its slope in ln d": [_shift(r) for r in rows],
        }
    )
    last = int(labels["horizon"].max()) if len(labels) else 0
    header = [
        "## Synthetic data: the selection boundaries at step 1, at the last horizon and at the limit",
        f"The atlas's fixed parameters: {spec.fixed_text(runs)}. Law (i), ||mu||* = c d^a n^b, fitted to the crossings "
        f"at step 1 and at the last horizon ({last:g} steps) of the atlas (W trained), at the last horizon of each "
        "line's W-frozen twin (the same data, W0 and test set, W fixed at W0, trained by the same flow and step size), "
        "and at t = infinity (the limit), each with the delete-one-(d, n)-line jackknife over the lines. The limit "
        "is computed, not read off a plateau: on every atlas line, the attention-SVM direction p^mm of a selection "
        "of training tokens (Tarzanagh et al. 2023), its softmax saturated: a test sample attends to argmax_t "
        "<W0^T x_t, p^mm>. With W fixed at W0, p / ||p|| tends to p^mm of the tokens gradient descent holds. Two "
        "selections: the twin's, the tokens it attends to most at the last horizon; and the global one, each "
        "training sample's token of highest score Y_i <x_it, nu>, which needs no run. Shifts: ln of one stage's "
        "crossings over another's on the same lines, by the interval-censored fit of the ratios (each line's "
        "bracket over the other stage's bracket midpoint, refined to the atlas's resolution), intervals from the "
        "lines' jackknife with the grid's variance, and the shift's slope in ln d (law (i) on the ratios): a mean "
        "over this design's cells (one at d 10^3). Words only for the twin against its own limit, against the "
        f"margin ±{margin:g} in ln ||mu||* (synthetic.boundary_fits.margin): 'within the margin of its limit' where "
        "the 95% interval lies inside it (an equivalence test at 2.5% a side), 'further than the margin' where it lies "
        "wholly outside, 'cannot tell' otherwise; and for training W (the atlas against its twin). The atlas's own "
        "limit, with W trained, is not computed.",
    ]
    write(table, display, header, stem)
    return table


def limit_shifts(runs: pd.DataFrame, curves: pd.DataFrame, labels: pd.DataFrame, criteria: Criteria,
                 limit: pd.DataFrame, selection: pd.DataFrame, stem: PathLike) -> pd.DataFrame:  # fmt: skip
    """Per selection boundary, comparison and (d, n) cell (benign.analysis.limit.cell_shifts), with
    how many atlas runs at the last horizon attend to the kinds of token the global selection picks."""
    shifts = lim.cell_shifts(runs, labels, limit, criteria)
    kinds = lim.reached(runs, curves, labels, selection)
    table = shifts.merge(kinds, on=["d", "n"], how="left")
    rows = [r for _, r in table.iterrows()]
    display = pd.DataFrame(
        {
            "Boundary": table["boundary"],
            "Comparison": table["comparison"],
            "d": table["d"].map(lambda v: f"{v:.0e}"),
            "n": table["n"],
            "Seeds (closed)": [f"{r['seeds']} ({r['closed']})" for r in rows],
            "Shift, ln [95% over seeds]": [_iv(r, "shift", signed=True) for r in rows],
            "Limit's ‖μ‖* / first step's law": [
                f"{r['limit_crossing'] / r['law_crossing']:.3f}" if np.isfinite(r["limit_crossing"]) else MISSING
                for r in rows
            ],
            "Law's omitted signal term, ln ‖μ‖*": table["law_omitted"].map(lambda v: f"{v:+.3f}"),
            "Twin's samples off the global selection; locally optimal; changed in the last decade": [
                f"{r['differs']:.3f}; {r['locally_optimal']:.3f}; {r['changed']:.3f}" for r in rows
            ],
            "cos(twin's p, p^mm), median": table["cosine"].map(lambda v: f"{v:.3f}"),
            "Atlas lines holding the global selection's kinds near the crossing (runs)": [
                f"{r['lines_same']:.0f} of {r['lines']:.0f} ({r['runs_same']:.0f} of {r['runs']:.0f})"
                if np.isfinite(r["lines"])
                else MISSING
                for r in rows
            ],
        }
    )
    last = int(labels["horizon"].max()) if len(labels) else 0
    header = [
        "## Synthetic data: the plateaus' shifts from the limit, per cell",
        f"The atlas's fixed parameters: {spec.fixed_text(runs)}. Per selection boundary, comparison (as in "
        "results/tables/boundary_limits) and (d, n) cell: the shift by the interval-censored fit of the cell's "
        "ratios, its seeds the units (independent draws; Student's t over them with the grid's variance), no words "
        f"(16 cells x 3 comparisons x 2 boundaries, unadjusted), at {last:g} steps; the limit's crossing (the twin's "
        "selection) over the first step's closed-form law at the cell, and the size of the term that law leaves out "
        "(the shift of its crossing were the query's signal part kept in its norm: docs/regimes.md#the-first-step); "
        "the W-frozen twin's selection: the share of training samples on which it differs from the global one, "
        "that is locally optimal (Tarzanagh et al.'s condition: the selected token's score above every support "
        "token's), that changed in the last decade of time before the horizon, and the median cosine of the twin's "
        "p with its selection's p^mm over the norms evaluated (convergence in direction is slow, about 1 / log t). "
        "Last column: of the cell's atlas lines (W trained; the runs of a line share its draw), how many have, at "
        "the last horizon, every run within a factor 2 of their hard-max crossing that fits every flipped label "
        "attending (most) to the relevant token on the same share of clean samples, and to each kind of token on "
        "the same shares of flipped samples, as the global selection does at their data (beside it, the runs). "
        "Equal shares are necessary for the same selection, not sufficient.",
    ]
    write(table, display, header, stem)
    return table
