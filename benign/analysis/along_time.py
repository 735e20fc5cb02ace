"""Each boundary followed along time, from the first step (docs/regimes.md#along-time): law (i)
refitted at every horizon, the drift of the lines' crossings between horizons, and for the
selection labels the first step's closed-form law (benign.analysis.first_step) beside them.

What it separates: an exponent present at step 1 is the set-up's (the first step's (d / n)^(1/4)
and, at a fixed step size, the SNR contours' a = 1/2); what the dynamics add is how far each
boundary moves from there, and whether it stops."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from benign.analysis import crossings, first_step
from benign.analysis.boundaries import BOUNDARIES, side_labels
from benign.analysis.convergence import drift, paired_crossings
from benign.analysis.theory import Criteria

DATA = ("T", "rho", "eta", "sigma")  # the data parameters the first step's law takes
REFERENCE = 1000  # steps: the cumulative shift is counted from the first horizon at or past it


def law_crossings(lines: pd.DataFrame, label: str, criteria: Criteria) -> pd.Series:
    """The first step's ||mu||* at each row's (d, n) and data parameters (:data:`DATA`), at the
    label's threshold."""
    return lines.apply(lambda r: first_step.boundary(label, r["d"], int(r["n"]), int(r["T"]), r["rho"], r["eta"],
                                                     r["sigma"], criteria=criteria), axis=1)  # fmt: skip


def law_terms(runs: pd.DataFrame, label: str, criteria: Criteria) -> dict:
    """Law (i) c d^a n^b fitted by least squares to the first step's law at the atlas's (d, n)
    lines: the exponents the first step alone gives over this design (exact points, no interval)."""
    lines = runs.drop_duplicates(["d", "n"])
    y = np.log(law_crossings(lines, label, criteria).to_numpy(float))
    X = np.column_stack([np.ones(len(lines)), np.log(lines["d"].to_numpy(float)), np.log(lines["n"].to_numpy(float))])
    beta = np.linalg.lstsq(X, y, rcond=None)[0]
    return {"law_c": math.exp(beta[0]), "law_a": float(beta[1]), "law_b": float(beta[2])}


def shift_from_law(
    cr: pd.DataFrame, runs: pd.DataFrame, label: str, criteria: Criteria
) -> crossings.CrossingFit | None:
    """ln of the crossings over the first step's law at their line (each bracket divided by it),
    its mean fitted as the law without d or n: one constant whose interval is the lines' jackknife."""
    data = runs.drop_duplicates(["d", "n"]).set_index(["d", "n"])[list(DATA)]
    at = cr.join(data, on=["d", "n"])
    law = law_crossings(at, label, criteria).to_numpy(float)
    scaled = cr.assign(lower=cr["lower"] / law, upper=cr["upper"] / law)
    return crossings.fit(scaled, "none")


def boundary_path(runs: pd.DataFrame, labels: pd.DataFrame, criteria: Criteria) -> pd.DataFrame:
    """One row per (boundary, horizon) of ``labels`` (benign.analysis.theory.atlas_view): law
    (i)'s a, b and c with their intervals, the crossings, the drift of ln ||mu||* per decade of
    time since the previous horizon (benign.analysis.convergence.drift), the whole shift since
    the first horizon at or past :data:`REFERENCE` (a drift below the resolution per decade can
    still add up over decades), and for the selection
    labels of benign.analysis.first_step.LABELS the first step's law (its a, b and c over the
    design) and the shift of the crossings from it (ln, mean over lines)."""
    one_setting = all(runs[k].nunique() == 1 for k in DATA)
    knots = crossings.decade_knots(runs["d"])
    horizons = sorted(labels["horizon"].unique())
    reference = next((h for h in horizons if h >= REFERENCE), horizons[0])
    rows = []
    for name, column, negate, theory_a, theory_b, _ in BOUNDARIES:
        law = law_terms(runs, column, criteria) if column in first_step.LABELS and one_setting else {}
        cells = {h: side_labels(labels[labels["horizon"] == h], runs, column, negate) for h in horizons}
        for i, horizon in enumerate(horizons):
            cr = crossings.crossings(cells[horizon])
            power = crossings.fit(cr, "power", None, knots)
            row = {"boundary": name, "label": column, "horizon": int(horizon), "lines": cr.groupby(["d", "n"]).ngroups,
                   "crossings": len(cr), "bracketed": int((cr["censored"] == "").sum()),
                   "theory_a": theory_a, "theory_b": theory_b}  # fmt: skip
            crossings.put_term(row, power, "log_c", "c", math.exp)
            crossings.put_term(row, power, "a", "a")
            crossings.put_term(row, power, "b", "b")
            row["sigma"] = power.sigma if power else np.nan
            if i > 0:
                before = horizons[i - 1]
                moved = drift(paired_crossings(cells[before], cells[horizon]), math.log10(horizon / before))
                row.update({k if k.startswith("drift") else f"drift_{k}": v for k, v in moved.items()})
            if horizon > reference:  # the whole move since the reference horizon: a slow drift adds up
                total = drift(paired_crossings(cells[reference], cells[horizon]), 1.0)
                row.update(since=int(reference), since_shift=total["drift"], since_shift_low=total["drift_low"],
                           since_shift_high=total["drift_high"], since_lines=total["lines"])  # fmt: skip
            if law:
                row.update(law)
                crossings.put_term(row, shift_from_law(cr, runs, column, criteria), "log_c", "shift_from_law")
            rows.append(row)
    table = pd.DataFrame(rows)
    steps = runs["step_size"].dropna().unique()
    table.insert(3, "time", table["horizon"] * steps[0] if len(steps) == 1 else np.nan)
    return table


def settled_from(table: pd.DataFrame) -> dict[str, float]:
    """Per boundary, the first horizon from which every later drift is "settled" (NaN if none)."""
    out = {}
    for name, rows in table.groupby("boundary", sort=False):
        verdicts = rows["drift_verdict"].tolist()[1:]
        starts = rows["horizon"].tolist()[:-1]
        out[name] = next((float(starts[i]) for i in range(len(verdicts)) if all(v == "settled" for v in verdicts[i:])),
                         np.nan)  # fmt: skip
    return out
