"""Milestones of a synthetic run, read from its logged curve (docs/regimes.md#milestones).

- ``fit_noisy``: the first logged step from which the flipped training labels stay fitted (a
  fraction ``fit_threshold`` of them) at every later logged step;
- ``fit_all``: the first logged step at which the whole training set is fitted (against the
  labels trained on);
- ``generalized``: the first logged step at which the test loss is within ``loss_eps`` of its
  target, the model's loss floor where it has one (the token-selection models) and else its
  value at the horizon, and the test accuracy is at least ``test_threshold`` where it moves at
  all (its range over the curve exceeds ``acc_moves``).

A milestone not reached by the last logged step is censored: its step is the horizon (the last
logged step) and its ``*_censored`` flag is set. A run without flipped labels has no
``fit_noisy`` (step missing, not censored).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from benign import registry
from benign.metrics import TOKEN_LOSS_FLOOR, reached


@dataclass(frozen=True)
class Criteria:
    fit_threshold: float = 1.0  # fraction of flipped labels fitted
    loss_eps: float = 0.01  # generalized: test loss within this of its target
    test_threshold: float = 0.9  # generalized: test accuracy at least this, where it moves
    acc_moves: float = 0.05  # test accuracy "moves" when its range over the curve exceeds this


def _first(steps: np.ndarray, ok: np.ndarray) -> tuple[float, bool]:
    """(first step where ``ok``, censored): the horizon and True when it never holds."""
    hit = np.flatnonzero(ok)
    return (float(steps[hit[0]]), False) if hit.size else (float(steps[-1]), True)


def run_milestones(curve: pd.DataFrame, floor: float | None, criteria: Criteria = Criteria()) -> dict:
    """The milestones of one run's curve (rows: logged steps) as {name_step, name_censored}."""
    curve = curve.sort_values("step")
    steps = curve["step"].to_numpy()
    out: dict = {}
    noisy = curve["train_acc_noisy"]
    if noisy.isna().all():  # no flipped label to fit
        out["fit_noisy_step"], out["fit_noisy_censored"] = np.nan, False
    else:
        fitted = reached(noisy.fillna(0.0), criteria.fit_threshold).to_numpy()
        stays = np.logical_and.accumulate(fitted[::-1])[::-1]  # fitted here and at every later step
        out["fit_noisy_step"], out["fit_noisy_censored"] = _first(steps, stays)
    out["fit_all_step"], out["fit_all_censored"] = _first(steps, reached(curve["train_acc"], 1.0).to_numpy())
    loss = curve["test_loss"].to_numpy(dtype=float)
    target = floor if floor is not None else loss[-1]
    good = loss - target <= criteria.loss_eps
    acc = curve["test_acc"].to_numpy(dtype=float)
    if np.nanmax(acc) - np.nanmin(acc) > criteria.acc_moves:
        good &= acc >= criteria.test_threshold - 1e-9
    out["generalized_step"], out["generalized_censored"] = _first(steps, good)
    return out


def test_rise(curve: pd.DataFrame, fit_step: float, rise: float = 0.1, test_threshold: float = 0.9) -> dict:
    """Test accuracy at step 0, at ``fit_step`` (the training set fitted; NaN when censored)
    and at the horizon, and whether the accuracy starts low and rises after the fit: under
    ``test_threshold`` at step 0, up by at least ``rise`` at the horizon, and at the fit step
    less than half-way there (docs/regimes.md#delay-scan)."""
    curve = curve.sort_values("step")
    acc = curve.set_index("step")["test_acc"]
    start, end = float(acc.iloc[0]), float(acc.iloc[-1])
    at_fit = float(acc[acc.index <= fit_step].iloc[-1]) if np.isfinite(fit_step) else np.nan
    rises = start < test_threshold and end - start >= rise and np.isfinite(at_fit) and at_fit < (start + end) / 2
    return {"test_acc_start": start, "test_acc_at_fit": at_fit, "test_acc_end": end, "rises_after_fit": bool(rises)}


def milestones(curves: pd.DataFrame, floors: dict[str, float | None], criteria: Criteria = Criteria()) -> pd.DataFrame:
    """Milestones of every run in ``curves``, indexed by run_id; ``floors``: run_id -> the loss
    floor of its model (None where it has none)."""
    rows = {
        rid: run_milestones(curve, floors.get(rid), criteria) for rid, curve in curves.groupby("run_id", sort=False)
    }
    return pd.DataFrame.from_dict(rows, orient="index")


def annotate(runs: pd.DataFrame, curves: pd.DataFrame, criteria: Criteria = Criteria()) -> pd.DataFrame:
    """A copy of a runs table with its milestone columns from ``curves`` (runs not ok, or
    without a curve, keep theirs empty). The loss floor is the fixed-head models' (benign.registry)."""
    runs = runs.copy()
    ok = runs[runs["status"] == "ok"]
    floors = {
        rid: TOKEN_LOSS_FLOOR if registry.MODELS[m].fixed_head else None for rid, m in zip(ok["run_id"], ok["model"])
    }
    table = milestones(curves[curves["run_id"].isin(floors)], floors, criteria)
    for column in table.columns:
        runs[column] = (
            runs["run_id"].map(table[column]).astype(runs[column].dtype if column.endswith("_step") else object)
        )
    return runs
