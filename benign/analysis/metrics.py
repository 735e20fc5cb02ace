"""Numbers that figures and tables show, computed from the schema tables: seed means per grid
cell, per-step curve statistics, the steps at which a level is reached, and the token model's
loss floor. Kept apart from the plotting code so that a table can report what a figure draws.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

# The token model's loss floor: every sample's attention wholly on its relevant token gives
# margin nu . mu_y = 1/sqrt(2) (docs/model.md#loss-floor), so the logistic loss cannot go below log(1 + e^{-1/sqrt 2}).
TOKEN_LOSS_FLOOR = float(np.log1p(np.exp(-1 / np.sqrt(2))))


@dataclass
class Grid:
    """A metric averaged per cell of a two-way grid (rows ``y``, columns ``x``)."""

    x: np.ndarray
    y: np.ndarray
    values: np.ma.MaskedArray  # (len(y), len(x)); masked where no run or diverged
    diverged: np.ndarray  # bool (len(y), len(x)): a run in the cell is not ok or non-finite
    runs: np.ndarray  # int (len(y), len(x)): runs per cell


def cell_grid(df: pd.DataFrame, x: str, y: str, metric: str, x_values=None, y_values=None) -> Grid:
    """Mean of ``metric`` over the runs (seeds) in each (y, x) cell.

    A cell counts as diverged, and is masked, if any of its runs has status other than
    "ok" or a non-finite ``metric``: a partial mean over the surviving seeds would hide it.
    """
    bad = (df["status"] != "ok") | ~np.isfinite(df[metric].to_numpy(dtype=float))
    cells = (
        df.assign(_bad=bad.to_numpy(), _value=df[metric].to_numpy(dtype=float))
        .groupby([y, x])
        .agg(bad=("_bad", "any"), mean=("_value", "mean"), runs=("_value", "size"))
    )
    xs = np.asarray(sorted(df[x].unique()) if x_values is None else x_values)
    ys = np.asarray(sorted(df[y].unique()) if y_values is None else y_values)

    def table(col: str, fill):
        return cells[col].unstack(x).reindex(index=ys, columns=xs).fillna(fill).to_numpy()

    diverged = table("bad", False).astype(bool)
    runs = table("runs", 0).astype(int)
    mean = table("mean", np.nan).astype(float)
    values = np.ma.masked_array(np.where(diverged, np.nan, mean), mask=diverged | (runs == 0))
    return Grid(xs, ys, values, diverged, runs)


def reached(values: pd.Series, level: float) -> pd.Series:
    """Where ``values`` reach ``level``, with 1e-9 slack so that float rounding in a mean or a
    fraction does not hide a level that was reached."""
    return values >= level - 1e-9


def first_step(per_step: pd.Series, level: float) -> int | None:
    """The first step (index of ``per_step``, sorted) at which it reaches ``level``; None if never."""
    steps = per_step.index[reached(per_step, level)]
    return int(steps[0]) if len(steps) else None


def first_step_per_run(curves: pd.DataFrame, column: str, level: float) -> pd.Series:
    """run_id -> the first logged step at which ``column`` reaches ``level``; runs that never do are absent."""
    return curves[reached(curves[column], level)].groupby("run_id")["step"].min()


def step_band(curves: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """Per step: mean, min and max of each column over the runs (a line and its band)."""
    return curves.groupby("step")[list(columns)].agg(["mean", "min", "max"])


def delayed_milestones(curves: pd.DataFrame) -> dict:
    """On the mean-over-runs curves: the first step at which the training set is fitted (train
    accuracy 1), and test accuracy and loss at the first logged step, at that step and at the
    last step. Missing values are None (e.g. never fitted)."""
    mean = curves.groupby("step")[["train_acc", "test_acc", "test_loss", "train_loss"]].mean().sort_index()
    fit = first_step(mean["train_acc"], 1.0)
    first, last = mean.index[0], mean.index[-1]
    return {
        "first_step": int(first),
        "fit_step": fit,
        "last_step": int(last),
        "test_acc_first": float(mean.loc[first, "test_acc"]),
        "test_acc_fit": float(mean.loc[fit, "test_acc"]) if fit is not None else None,
        "test_acc_last": float(mean.loc[last, "test_acc"]),
        "test_loss_fit": float(mean.loc[fit, "test_loss"]) if fit is not None else None,
        "test_loss_last": float(mean.loc[last, "test_loss"]),
        "train_loss_last": float(mean.loc[last, "train_loss"]),
    }


def attention_curves(trace: pd.DataFrame) -> pd.Series:
    """Mean max attention per (dataset, n, eta, epoch), over seeds, samples and heads."""
    return trace.groupby(["dataset", "n", "eta", "epoch"])["max_attention"].mean()


def in_grid(real_runs: pd.DataFrame, grid: dict | None) -> pd.DataFrame:
    """The real runs of ``grid`` (``real.grid``: its n, seeds and eta); all of them without one."""
    if grid is None:
        return real_runs
    keep = real_runs["n"].isin(grid["n"]) & real_runs["seed"].isin(grid["seeds"]) & real_runs["eta"].isin(grid["eta"])
    return real_runs[keep]
