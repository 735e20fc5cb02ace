"""Milestones of a synthetic run, read from its logged curve (docs/regimes.md#milestones).

- ``fit_noisy``: the first logged step from which the flipped training labels stay fitted (a
  fraction ``fit_threshold`` of them) at every later logged step: the fit time;
- ``fit_all``: the first logged step at which the whole training set is fitted (against the
  labels trained on);
- ``generalized``: the first logged step from which attention selects the relevant token at test
  time (benign.analysis.theory.selects: the normalised test loss r at most ``loss_threshold``) at every
  later logged step: the generalization time.

A milestone not reached by the last logged step is censored: its step is the horizon (the last
logged step) and its ``*_censored`` flag is set. Censored times are kept, never dropped: the
survival fits of benign.analysis.survival read them as such. A run without flipped labels has no
``fit_noisy`` (step missing, not censored).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign.analysis.metrics import reached
from benign.analysis.theory import Criteria, selects


def _first(steps: np.ndarray, ok: np.ndarray) -> tuple[float, bool]:
    """(first step where ``ok``, censored): the horizon and True when it never holds."""
    hit = np.flatnonzero(ok)
    return (float(steps[hit[0]]), False) if hit.size else (float(steps[-1]), True)


def _stays(ok: np.ndarray) -> np.ndarray:
    """Where ``ok`` holds here and at every later entry."""
    return np.logical_and.accumulate(ok[::-1])[::-1]


def run_milestones(curve: pd.DataFrame, criteria: Criteria) -> dict:
    """The milestones of one run's curve (rows: logged steps) as {name_step, name_censored}."""
    curve = curve.sort_values("step")
    steps = curve["step"].to_numpy()
    out: dict = {}
    noisy = curve["train_acc_noisy"]
    if noisy.isna().all():  # no flipped label to fit
        out["fit_noisy_step"], out["fit_noisy_censored"] = np.nan, False
    else:
        fitted = reached(noisy.fillna(0.0), criteria.fit_threshold).to_numpy()
        out["fit_noisy_step"], out["fit_noisy_censored"] = _first(steps, _stays(fitted))
    out["fit_all_step"], out["fit_all_censored"] = _first(steps, reached(curve["train_acc"], 1.0).to_numpy())
    good = selects(curve["test_loss_normalised"], curve["test_sel_relevant"], criteria)
    out["generalized_step"], out["generalized_censored"] = _first(steps, _stays(np.asarray(good, dtype=bool)))
    return out


def order(run: pd.Series) -> str:
    """Which came first for one annotated run: "selection after fit", "selection before fit",
    "together" (the same logged step), or what the horizon censored ("fit only", "selection
    only", "neither")."""
    fit_c, gen_c = bool(run["fit_noisy_censored"]), bool(run["generalized_censored"])
    if fit_c or gen_c:
        return {(True, True): "neither", (False, True): "fit only", (True, False): "selection only"}[(fit_c, gen_c)]
    fit, gen = run["fit_noisy_step"], run["generalized_step"]
    return "together" if fit == gen else "selection after fit" if gen > fit else "selection before fit"


def milestones(curves: pd.DataFrame, criteria: Criteria) -> pd.DataFrame:
    """Milestones of every run in ``curves``, indexed by run_id."""
    rows = {rid: run_milestones(curve, criteria) for rid, curve in curves.groupby("run_id", sort=False)}
    return pd.DataFrame.from_dict(rows, orient="index")


def annotate(runs: pd.DataFrame, curves: pd.DataFrame, criteria: Criteria) -> pd.DataFrame:
    """A copy of a runs table with its milestone columns from ``curves`` (runs not ok, or
    without a curve, keep theirs empty)."""
    runs = runs.copy()
    ok = runs.loc[runs["status"] == "ok", "run_id"]
    table = milestones(curves[curves["run_id"].isin(ok)], criteria)
    for column in table.columns:
        runs[column] = (
            runs["run_id"].map(table[column]).astype(runs[column].dtype if column.endswith("_step") else object)
        )
    return runs
