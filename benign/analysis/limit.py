"""The atlas's selection boundaries at step 1, at the last horizon and at t = infinity, side by
side (docs/regimes.md#the-limit).

The limit is computed (benign.synthetic.svm_limit): with W fixed at W0 the direction of p tends to
the attention-SVM direction of the selected tokens (the W-frozen twin's at the horizon, or the
global selection), and the test labels are those of its saturated softmax. Each stage's crossings
are fitted by the same law (i); stages are compared line by line, ln of one crossing over the
other's, by the interval-censored fit of the ratios, like against like: the twin's plateau against
its own limit, the atlas (W trained) against its twin. Which tokens the W-trained runs hold is read
from the runs: the kinds each atlas line's runs near its crossing attend to most, against those of
the global selection at the same data (a necessary condition for the same selection, not a
sufficient one).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from benign.analysis import crossings, first_step
from benign.analysis.along_time import law_terms, shift_from_law
from benign.analysis.boundaries import BOUNDARIES, side_labels
from benign.analysis.equivalence import verdict
from benign.analysis.theory import Criteria, selects_argmax, selects_hardmax
from benign.synthetic import limit_schema

SELECTIONS = {"run": "the twin's selection", "global": "the global selection"}  # benign.synthetic.svm_limit's
LABELS = first_step.LABELS  # the selection labels a saturated softmax has: the argmax's and the hard max's
NAMES = {column: name for name, column, *_ in BOUNDARIES}
TOLERANCE = 1e-9
KINDS = limit_schema.KINDS
RUN_KINDS = ["train_clean_sel_relevant", *[f"train_noisy_sel_{k}" for k in KINDS]]  # as the trainer logs them
LIMIT_KINDS = ["clean_sel_relevant", *[f"noisy_sel_{k}" for k in KINDS]]  # as benign.synthetic.svm_limit gives them


def limit_sides(limit: pd.DataFrame, criteria: Criteria) -> pd.DataFrame:
    """The labels of :data:`LABELS` at each row of ``limit``: the limit's (an inseparable
    selection: neither) and, prefixed "trained_", the W-frozen twin's own at the horizon (its
    plateau)."""
    return pd.DataFrame(
        {"selects_argmax": selects_argmax(limit["test_sel_relevant"], criteria),
         "selects_hardmax": selects_hardmax(limit["test_err_hardmax"], criteria),
         "trained_selects_argmax": selects_argmax(limit["test_sel_trained"], criteria),
         "trained_selects_hardmax": selects_hardmax(limit["test_err_trained"], criteria)}, index=limit.index,
    )  # fmt: skip


def limit_cells(
    limit: pd.DataFrame, label: str, criteria: Criteria, selection: str, trained: bool = False
) -> pd.DataFrame:
    """The (d, n, seed, signal_norm, side) of one label under one selection
    (benign.synthetic.svm_limit.SELECTIONS), as side_labels gives a horizon's: the limit's, or
    with ``trained`` the W-frozen twin's own at the horizon (the same on either selection's rows)."""
    one = limit[limit["selection"] == selection]
    column = f"trained_{label}" if trained else label
    return one[["d", "n", "seed", "signal_norm"]].assign(side=limit_sides(one, criteria)[column].to_numpy())


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


def scaled(base: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """``base``'s crossings (brackets) over ``other``'s on the same line, each divided by the other
    bracket's geometric midpoint: ln of the ratio as an interval-censored crossing (lines whose
    other bracket is open are left out). ``other`` is the finer one here: the limit's and the
    twin's crossings are refined to the atlas's resolution, the atlas's plateau is not."""
    closed = other[(other["lower"] > 0) & np.isfinite(other["upper"])]
    mid = np.sqrt(closed["lower"].to_numpy(float) * closed["upper"].to_numpy(float))
    ref = closed[["d", "n", "seed"]].assign(mid=mid)
    out = base.merge(ref, on=["d", "n", "seed"])
    return out.assign(lower=out["lower"] / out["mid"], upper=out["upper"] / out["mid"]).drop(columns="mid")


def shift(base: pd.DataFrame, other: pd.DataFrame, knots: tuple, margin: float, words: dict | None = None) -> dict:
    """ln of ``base``'s crossings over ``other``'s on the same lines, by the interval-censored fit of
    the ratios (:func:`scaled`; benign.analysis.crossings.fit, law "none": one mean, intervals from
    the lines' jackknife plus the grid's), its trend with d and n (law (i) on the ratios: the
    shift's slopes in ln d and ln n), and, with ``words``, the words of its interval against
    ``margin`` (benign.analysis.equivalence.verdict, mapped through ``words``)."""
    ratios = scaled(base, other)
    mean, trend = crossings.fit(ratios, "none"), crossings.fit(ratios, "power", None, knots)
    row = {"pairs": len(ratios), "margin": margin}
    crossings.put_term(row, mean, "log_c", "shift")
    crossings.put_term(row, trend, "a", "shift_per_ln_d")
    crossings.put_term(row, trend, "b", "shift_per_ln_n")
    judged = verdict(row["shift_low"], row["shift_high"], 0.0, margin)
    row["words"] = (words or {}).get(judged, "cannot tell") if words else ""
    return row


# the stages whose crossings are fitted, and the shifts compared between them
LIMIT_WORDS = {"agrees": "within the margin of its limit", "departs": "further than the margin from its limit"}
W_WORDS = {"agrees": "training W moves it less than the margin", "departs": "training W moves it more than the margin"}
COMPARED = (  # (name, base stage, other stage, words)
    ("twin's plateau minus twin's limit", "twin's plateau", "limit, the twin's selection", LIMIT_WORDS),
    ("atlas's plateau minus twin's plateau", "atlas's plateau", "twin's plateau", W_WORDS),
    ("atlas's plateau minus twin's limit", "atlas's plateau", "limit, the twin's selection", None),
    ("global limit minus twin's limit", "limit, the global selection", "limit, the twin's selection", None),
)


def stage_crossings(runs: pd.DataFrame, labels: pd.DataFrame, limit: pd.DataFrame, criteria: Criteria,
                    label: str) -> dict[str, tuple[float, pd.DataFrame, pd.DataFrame]]:  # fmt: skip
    """{stage: (horizon, crossings, the frame its data parameters come from)} of one label: step 1
    and the last horizon of the atlas (W trained), the W-frozen twin's at the last horizon, and
    the limit under each selection."""
    first, last = labels["horizon"].min(), labels["horizon"].max()
    at = lambda h: crossings.crossings(side_labels(labels[labels["horizon"] == h], runs, label, False))  # noqa: E731
    return {
        "step 1": (first, at(first), runs),
        "atlas's plateau": (last, at(last), runs),
        "twin's plateau": (last, crossings.crossings(limit_cells(limit, label, criteria, "run", trained=True)), limit),
        **{f"limit, {words}": (np.inf, crossings.crossings(limit_cells(limit, label, criteria, selection)), limit)
           for selection, words in SELECTIONS.items()},
    }  # fmt: skip


def stages(runs: pd.DataFrame, labels: pd.DataFrame, limit: pd.DataFrame, criteria: Criteria,
           margin: float) -> pd.DataFrame:  # fmt: skip
    """Per selection label: one "fit" row per stage (:func:`stage_crossings`: law (i) with
    intervals, the shift from the first step's law) and one "shift" row per comparison of
    :data:`COMPARED` (:func:`shift`); words against ``margin`` ("within the margin of its limit",
    "further than the margin from its limit", "cannot tell") only where the twin's plateau is set
    against its own limit: the atlas trains W, whose limit is not computed."""
    knots = crossings.decade_knots(runs["d"])
    rows = []
    for label in LABELS:
        law = law_terms(runs, label, criteria)
        found = stage_crossings(runs, labels, limit, criteria, label)
        for stage, (horizon, cr, data) in found.items():
            rows.append({"boundary": NAMES[label], "label": label, "kind": "fit", "stage": stage,
                         "horizon": float(horizon), **law, **_fit_row(cr, data, label, criteria, knots)})  # fmt: skip
        for name, base, other, words in COMPARED:
            rows.append({"boundary": NAMES[label], "label": label, "kind": "shift", "stage": name,
                         "horizon": np.nan, **shift(found[base][1], found[other][1], knots, margin, words)})  # fmt: skip
    return pd.DataFrame(rows)


def _per_seed(cr: pd.DataFrame) -> pd.DataFrame:
    """One cell's crossings with each seed its own unit (the seeds of a cell are independent
    draws): the interval-censored fit's jackknife then runs over the seeds."""
    return cr.assign(d=cr["seed"].astype(float), n=1)


def cell_shifts(runs: pd.DataFrame, labels: pd.DataFrame, limit: pd.DataFrame, criteria: Criteria) -> pd.DataFrame:
    """One row per selection label, comparison of :data:`COMPARED` (the first three) and (d, n)
    cell: the shift by the interval-censored fit of the cell's ratios (its seeds the units:
    Student's t over them, with the grid's variance), the seeds compared, the limit's crossing
    over the first step's law at the cell (the geometric mean of its seeds' bracket midpoints) and
    the size of the term that law leaves out (the shift in ln ||mu||* were the query's signal part
    kept: benign.analysis.first_step.signal_factor); on the twin's rows the mean share of training
    samples on which its selection differs from the global one, is locally optimal, changed in the
    last decade of time, and the median cosine of the twin's p at the horizon with p^mm."""
    data = limit.drop_duplicates(["d", "n"]).set_index(["d", "n"])
    twin = limit[limit["selection"] == "run"]
    rows = []
    for label in LABELS:
        found = stage_crossings(runs, labels, limit, criteria, label)
        at_limit = found["limit, the twin's selection"][1]
        for name, base, other, _ in COMPARED[:3]:
            ratios = scaled(found[base][1], found[other][1])
            for (d, n), cell in ratios.groupby(["d", "n"]):
                f = crossings.fit(_per_seed(cell), "none")
                row = {"boundary": NAMES[label], "label": label, "comparison": name, "d": d, "n": n,
                       "seeds": len(cell), "closed": int((cell["censored"] == "").sum())}  # fmt: skip
                crossings.put_term(row, f, "log_c", "shift")
                closed = at_limit[(at_limit["d"] == d) & (at_limit["n"] == n) & (at_limit["lower"] > 0)
                                  & np.isfinite(at_limit["upper"])]  # fmt: skip
                p = data.loc[(d, n)]
                args = (label, d, int(n), int(p["T"]), p["rho"], p["eta"], p["sigma"])
                law = first_step.boundary(*args, criteria=criteria)
                mid = np.sqrt(closed["lower"].to_numpy(float) * closed["upper"].to_numpy(float))
                at = twin[(twin["d"] == d) & (twin["n"] == n)]
                row.update(limit_crossing=float(np.exp(np.log(mid).mean())) if len(mid) else np.nan, law_crossing=law,
                           law_omitted=math.log(first_step.boundary(*args, criteria=criteria, signal_part=True) / law),
                           differs=float(at["differs"].mean()), locally_optimal=float(at["locally_optimal"].mean()),
                           changed=float(at["changed"].mean()), cosine=float(at["cosine"].median()))  # fmt: skip
                rows.append(row)
    return pd.DataFrame(rows)


def reached(runs: pd.DataFrame, curves: pd.DataFrame, labels: pd.DataFrame, selection: pd.DataFrame) -> pd.DataFrame:
    """Per (d, n) cell, its lines the units (a line's runs share its draw): how many lines' atlas
    runs at the last horizon attend, on their clean and their flipped training samples, to the
    same kinds of token in the same shares as the global selection at their data (``selection``:
    run_id and :data:`LIMIT_KINDS`), over the runs within a factor 2 of the line's hard-max
    crossing there (where a selection decides the label) that fit every flipped label (the global
    selection fits them all). A line holds the kinds where every such run does."""
    last = labels["horizon"].max()
    at = curves[curves["step"] == last][["run_id", "train_acc_noisy", *RUN_KINDS]]
    both = at.merge(selection, on="run_id").merge(runs[["run_id", "d", "n", "seed", "signal_norm"]], on="run_id")
    same = np.ones(len(both), dtype=bool)
    for run_kind, limit_kind in zip(RUN_KINDS, LIMIT_KINDS):
        a, b = both[run_kind].to_numpy(float), both[limit_kind].to_numpy(float)
        same &= (np.abs(a - b) <= TOLERANCE) | (np.isnan(a) & np.isnan(b))
    plateau = crossings.crossings(side_labels(labels[labels["horizon"] == last], runs, "selects_hardmax", False))
    plateau = plateau[(plateau["lower"] > 0) & np.isfinite(plateau["upper"])]
    mid = plateau.assign(mid=np.sqrt(plateau["lower"].astype(float) * plateau["upper"].astype(float)))
    both = both.assign(same=same).merge(mid[["d", "n", "seed", "mid"]], on=["d", "n", "seed"])
    near = both[(np.abs(np.log(both["signal_norm"] / both["mid"])) <= math.log(2))
                & (both["train_acc_noisy"].to_numpy(float) >= 1 - TOLERANCE)]  # fmt: skip
    rows = []
    for (d, n), cell in near.groupby(["d", "n"]):
        held = cell.groupby("seed")["same"].all()
        rows.append({"d": d, "n": n, "lines": len(held), "lines_same": int(held.sum()), "runs": len(cell),
                     "runs_same": int(cell["same"].sum())})  # fmt: skip
    return pd.DataFrame(rows, columns=["d", "n", "lines", "lines_same", "runs", "runs_same"])
