"""The atlas's selection boundaries at step 1, at the last horizon and at t = infinity, side by
side (docs/regimes.md#the-limit).

The limit is computed (benign.synthetic.svm_limit): with W fixed at W0 the direction of p tends to
the attention-SVM direction of the selected tokens, here the global selection, and the test
labels are those of its saturated softmax. Its crossings are fitted by the same law (i) as the
trained ones; each line's limit crossing is paired with the same line's crossing at the last
horizon (the plateau): their shift in ln ||mu||*, per (d, n) cell over its seeds and over the
cells. Where gradient descent goes is read from the runs: the kinds of token each atlas run's
training samples attend to most at the last horizon, against those of the global selection at the
same data (a necessary condition for the same selection, not a sufficient one).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.stats import t as student

from benign.analysis import crossings, first_step
from benign.analysis.along_time import law_terms, shift_from_law
from benign.analysis.boundaries import BOUNDARIES, side_labels
from benign.analysis.equivalence import verdict
from benign.analysis.theory import Criteria, selects_argmax, selects_hardmax

SELECTIONS = {"run": "the twin's selection", "global": "the global selection"}  # benign.synthetic.svm_limit's
LABELS = first_step.LABELS  # the selection labels a saturated softmax has: the argmax's and the hard max's
NAMES = {column: name for name, column, *_ in BOUNDARIES}
LEVEL = 0.95
TOLERANCE = 1e-9
KINDS = ("relevant", "weak_true", "weak_opposite", "irrelevant")
RUN_KINDS = ["train_clean_sel_relevant", *[f"train_noisy_sel_{k}" for k in KINDS]]  # as the trainer logs them
LIMIT_KINDS = ["clean_sel_relevant", *[f"noisy_sel_{k}" for k in KINDS]]  # as benign.synthetic.svm_limit gives them


def limit_sides(limit: pd.DataFrame, criteria: Criteria) -> pd.DataFrame:
    """The limit's labels of :data:`LABELS` at each row of ``limit`` (an inseparable selection:
    neither)."""
    return pd.DataFrame(
        {"selects_argmax": selects_argmax(limit["test_sel_relevant"], criteria),
         "selects_hardmax": selects_hardmax(limit["test_err_hardmax"], criteria)}, index=limit.index,
    )  # fmt: skip


def limit_cells(limit: pd.DataFrame, label: str, criteria: Criteria, selection: str) -> pd.DataFrame:
    """The limit's (d, n, seed, signal_norm, side) of one label under one selection
    (benign.synthetic.svm_limit.SELECTIONS), as side_labels gives a horizon's."""
    one = limit[limit["selection"] == selection]
    return one[["d", "n", "seed", "signal_norm"]].assign(side=limit_sides(one, criteria)[label].to_numpy())


def _fit_row(cr: pd.DataFrame, data: pd.DataFrame, label: str, criteria: Criteria, knots: tuple) -> dict:
    """Law (i)'s a, b and c with their intervals, sigma, and the mean shift of the crossings from
    the first step's law (ln, the lines' jackknife)."""
    row = {
        "lines": cr.groupby(["d", "n"]).ngroups,
        "crossings": len(cr),
        "bracketed": int((cr["censored"] == "").sum()),
    }
    power = crossings.fit(cr, "power", None, knots)
    crossings.put_term(row, power, "log_c", "c", math.exp)
    crossings.put_term(row, power, "a", "a")
    crossings.put_term(row, power, "b", "b")
    row["sigma"] = power.sigma if power else np.nan
    crossings.put_term(row, shift_from_law(cr, data, label, criteria), "log_c", "shift_from_law")
    return row


def paired(plateau: pd.DataFrame, limit: pd.DataFrame) -> pd.DataFrame:
    """One row per line of both crossing frames: the plateau's bracket, the limit's, ``shift`` =
    ln of the plateau's bracket midpoint over the limit's (NaN unless both are closed) and
    ``moved`` where the brackets are disjoint."""
    pairs = plateau.merge(limit[["d", "n", "seed", "lower", "upper"]], on=["d", "n", "seed"], suffixes=("", "_limit"))
    closed = lambda lo, hi: (lo > 0) & np.isfinite(hi)  # noqa: E731
    both = closed(pairs["lower"], pairs["upper"]) & closed(pairs["lower_limit"], pairs["upper_limit"])
    mid = lambda lo, hi: 0.5 * (np.log(lo.where(both, 1.0)) + np.log(hi.where(both, 1.0)))  # noqa: E731
    shift = mid(pairs["lower"], pairs["upper"]) - mid(pairs["lower_limit"], pairs["upper_limit"])
    moved = (pairs["upper"] < pairs["lower_limit"]) | (pairs["upper_limit"] < pairs["lower"])
    return pairs.assign(shift=shift.where(both), moved=moved)


def mean_interval(values: np.ndarray) -> tuple[float, float, float]:
    """(mean, low, high): the 95% Student's t interval of the mean of independent ``values``
    (NaN ends under two values)."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if len(values) == 0:
        return np.nan, np.nan, np.nan
    mean = float(values.mean())
    if len(values) < 2:
        return mean, np.nan, np.nan
    half = float(student.ppf(0.5 + LEVEL / 2, len(values) - 1)) * float(values.std(ddof=1)) / math.sqrt(len(values))
    return mean, mean - half, mean + half


def tolerance(cr: pd.DataFrame) -> float:
    """The margin within which a plateau is 'at its limit': the lines' resolution in ln ||mu||
    (benign.analysis.crossings.line_resolution), the least shift the staggered brackets resolve."""
    return crossings.line_resolution(cr)


def stages(runs: pd.DataFrame, labels: pd.DataFrame, limit: pd.DataFrame, criteria: Criteria) -> pd.DataFrame:
    """One row per selection label and stage: "step 1" (the first horizon of ``labels``), "last
    horizon" and the limit under each selection of :data:`SELECTIONS` (``limit``,
    benign.synthetic.svm_limit's frame): law (i) with intervals, the shift from the first step's
    law, and on the limit's rows the shift of the plateau from the limit (ln, mean over the (d, n)
    cells of their seeds' mean, Student's t over the cells) with its words against the lines'
    resolution: "at its limit", "short of its limit" or "cannot tell"."""
    knots = crossings.decade_knots(runs["d"])
    first, last = labels["horizon"].min(), labels["horizon"].max()
    rows = []
    for label in LABELS:
        law = law_terms(runs, label, criteria)
        plateau = crossings.crossings(side_labels(labels[labels["horizon"] == last], runs, label, False))
        stage_crossings = {
            "step 1": (first, crossings.crossings(side_labels(labels[labels["horizon"] == first], runs, label, False))),
            "last horizon": (last, plateau),
            **{f"limit, {words}": (np.inf, crossings.crossings(limit_cells(limit, label, criteria, selection)))
               for selection, words in SELECTIONS.items()},
        }  # fmt: skip
        for stage, (horizon, cr) in stage_crossings.items():
            data = runs if np.isfinite(horizon) else limit
            row = {"boundary": NAMES[label], "label": label, "stage": stage, "horizon": float(horizon), **law,
                   **_fit_row(cr, data, label, criteria, knots)}  # fmt: skip
            if not np.isfinite(horizon):
                row.update(overall_shift(paired(plateau, cr)))
            rows.append(row)
    return pd.DataFrame(rows)


def overall_shift(pairs: pd.DataFrame) -> dict:
    """The plateau's shift from the limit over the cells (module docstring) and its words."""
    cells = pairs.dropna(subset=["shift"]).groupby(["d", "n"])["shift"].mean().to_numpy(float)
    mean, low, high = mean_interval(cells)
    margin = tolerance(pairs)
    words = {"agrees": "at its limit", "departs": "short of its limit"}.get(
        verdict(low, high, 0.0, margin), "cannot tell"
    )
    return {"plateau_shift": mean, "plateau_shift_low": low, "plateau_shift_high": high, "plateau_cells": len(cells),
            "plateau_pairs": int(pairs["shift"].notna().sum()), "plateau_moved": int(pairs["moved"].sum()),
            "tolerance": margin, "plateau_words": words}  # fmt: skip


def cell_shifts(runs: pd.DataFrame, labels: pd.DataFrame, limit: pd.DataFrame, criteria: Criteria) -> pd.DataFrame:
    """One row per selection label, selection of :data:`SELECTIONS` and (d, n) cell: the
    plateau's shift from the limit over the cell's seeds (mean, Student's t interval: the seeds are
    independent draws), how many brackets are disjoint, the limit's crossing (its seeds' geometric
    mean of bracket midpoints) beside the first step's law at the cell and the size of the term
    that law leaves out (the shift in ln ||mu||* were the query's signal part kept:
    benign.analysis.first_step.signal_factor), the mean share of training
    samples on which the selection differs from the global one, and the median cosine of the
    W-frozen twin's p at the horizon with the selection's p^mm (over the norms evaluated)."""
    last = labels["horizon"].max()
    data = limit.drop_duplicates(["d", "n"]).set_index(["d", "n"])
    rows = []
    for label in LABELS:
        plateau = crossings.crossings(side_labels(labels[labels["horizon"] == last], runs, label, False))
        for selection in SELECTIONS:
            at_limit = crossings.crossings(limit_cells(limit, label, criteria, selection))
            evaluated = limit[limit["selection"] == selection]
            for (d, n), cell in paired(plateau, at_limit).groupby(["d", "n"]):
                mean, low, high = mean_interval(cell["shift"].to_numpy(float))
                closed = cell.dropna(subset=["shift"])
                mid = np.exp(0.5 * (np.log(closed["lower_limit"]) + np.log(closed["upper_limit"]))).to_numpy(float)
                p = data.loc[(d, n)]
                args = (label, d, int(n), int(p["T"]), p["rho"], p["eta"], p["sigma"])
                thresholds = {
                    "rate_threshold": criteria.rate_threshold,
                    "hardmax_threshold": criteria.hardmax_threshold,
                }
                law = first_step.boundary(*args, **thresholds)
                with_signal = first_step.boundary(*args, **thresholds, signal_part=True)
                at = evaluated[(evaluated["d"] == d) & (evaluated["n"] == n)]
                rows.append({"boundary": NAMES[label], "label": label, "selection": selection, "d": d, "n": n,
                             "seeds": len(cell), "closed": len(closed), "moved": int(cell["moved"].sum()),
                             "shift": mean, "shift_low": low, "shift_high": high,
                             "limit_crossing": float(np.exp(np.log(mid).mean())) if len(mid) else np.nan,
                             "law_crossing": float(law), "law_omitted": math.log(with_signal / law),
                             "differs": float(at["differs"].mean()),
                             "cosine": float(at["cosine"].median())})  # fmt: skip
    return pd.DataFrame(rows)


def reached(runs: pd.DataFrame, curves: pd.DataFrame, labels: pd.DataFrame, selection: pd.DataFrame) -> pd.DataFrame:
    """Per (d, n) cell: how many atlas runs at the last horizon attend, on their clean and their
    flipped training samples, to the same kinds of token in the same shares as the global
    selection at their data (``selection``: run_id and :data:`LIMIT_KINDS`), over all the cell's
    runs and over those that fit every flipped label (the global selection fits them all; a run
    on the not-overfitting side cannot hold it)."""
    last = labels["horizon"].max()
    at = curves[curves["step"] == last][["run_id", "train_acc_noisy", *RUN_KINDS]]
    both = at.merge(selection, on="run_id").merge(runs[["run_id", "d", "n"]], on="run_id")
    same = np.ones(len(both), dtype=bool)
    for run_kind, limit_kind in zip(RUN_KINDS, LIMIT_KINDS):
        a, b = both[run_kind].to_numpy(float), both[limit_kind].to_numpy(float)
        same &= (np.abs(a - b) <= TOLERANCE) | (np.isnan(a) & np.isnan(b))
    both = both.assign(same=same, fits_all=both["train_acc_noisy"].to_numpy(float) >= 1 - TOLERANCE)
    rows = []
    for (d, n), cell in both.groupby(["d", "n"]):
        fitted = cell[cell["fits_all"]]
        rows.append({"d": d, "n": n, "runs": len(cell), "same": int(cell["same"].sum()),
                     "overfitting_runs": len(fitted), "overfitting_same": int(fitted["same"].sum())})  # fmt: skip
    return pd.DataFrame(rows, columns=["d", "n", "runs", "same", "overfitting_runs", "overfitting_same"])
