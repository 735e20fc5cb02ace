"""Refinement of the atlas around its transitions, and the step-convergence runs
(docs/regimes.md#refinement, docs/regimes.md#step-convergence).

The coarse atlas samples ||mu|| on a factor grid with a few seeds. After it has run, each (d, n)
line gets a window around each transition of each boundary at each horizon it reaches: the two
neighbouring coarse norms between which the seeds' mean label crosses 1/2, and ``points``
geometric norms between them, shifted by a fraction of a step that differs between seeds (the
seeds' brackets are staggered, so that together they place the line's crossing finer than one
seed's bracket). Every refinement seed is trained at every norm of the line's windows at its
offset (the coarse seeds at the new norms only), to the latest horizon of a window that holds
the norm: the seeds that make a crossing an independent unit are added where the crossings are,
and a norm only an early window needs is not trained to the line's length (its logged steps are
the prefix of the line's log-spaced grid, its horizon among them). A new seed whose
crossing falls outside a window is censored at the window's end, never dropped.

The step-convergence runs repeat the windows of the longest horizon for a few seeds at the step
divided by ``factor`` and ``factor`` times the steps: the same normalised time, finer steps. New
runs are new jobs, planned from the coarse results (a Snakemake checkpoint), so a rerun plans the
same jobs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign.analysis.boundaries import SIDES
from benign.analysis.theory import Criteria, regimes_at
from benign.synthetic import spec

RUN_FIELDS = tuple(k for k in spec.NUMBERS if k not in ("signal_norm", "steps", "seed"))  # the line's, at any norm


def crossings(norms: np.ndarray, mean_side: np.ndarray) -> list[tuple[float, float]]:
    """Neighbouring norm pairs (sorted) between which the mean label crosses 1/2."""
    order = np.argsort(norms)
    norms, above = norms[order], mean_side[order] >= 0.5
    return [(float(norms[i]), float(norms[i + 1])) for i in range(len(norms) - 1) if above[i] != above[i + 1]]


def windows(runs: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """(d, n, boundary, horizon, low, high): each crossing of each boundary's mean label on each
    (d, n) line at each horizon of ``labels``, between two neighbouring norms of ``runs``."""
    cells = labels.merge(runs[["run_id", "d", "n", "signal_norm"]], on="run_id")
    rows = []
    for name, (column, negate) in SIDES.items():
        side = ~cells[column].astype(bool) if negate else cells[column].astype(bool)
        mean = cells.assign(side=side).groupby(["horizon", "d", "n", "signal_norm"])["side"].mean().reset_index()
        for (horizon, d, n), line in mean.groupby(["horizon", "d", "n"]):
            for low, high in crossings(line["signal_norm"].to_numpy(float), line["side"].to_numpy(float)):
                rows.append({"d": int(d), "n": int(n), "boundary": name, "horizon": int(horizon), "low": low,
                             "high": high})  # fmt: skip
    return pd.DataFrame(rows, columns=["d", "n", "boundary", "horizon", "low", "high"])


def window_norms(low: float, high: float, points: int, offset: float = 0.0) -> list[float]:
    """A window's norms: its two ends and ``points`` + 1 geometric steps between them, the
    interior shifted up by ``offset`` (in [0, 1)) of a step: seeds with different offsets bracket
    a crossing at staggered norms, so that together they place a line's crossing within a
    fraction of one seed's bracket (docs/regimes.md#refinement)."""
    step = (high / low) ** (1 / (points + 1))
    inner = [low * step ** (j + offset) for j in range(points + 1)]
    return sorted({round(float(v), 6) for v in (low, *inner, high)})


def offsets(seeds) -> dict[int, float]:
    """{seed: its offset}: the seeds, sorted, spread evenly over [0, 1), the first at 0 (the
    coarse grid's)."""
    ordered = sorted({int(s) for s in seeds})
    return {s: k / len(ordered) for k, s in enumerate(ordered)}


def _line_norms(found: pd.DataFrame, points: int, offset: float) -> dict[tuple[int, int], dict[float, int]]:
    """{(d, n): {norm: the latest horizon of the line's windows that hold it}, the norms of every
    window of the line at one seed's ``offset``, sorted}."""
    out: dict[tuple[int, int], dict[float, int]] = {}
    for w in found.itertuples():
        line = out.setdefault((w.d, w.n), {})
        for norm in window_norms(w.low, w.high, points, offset):
            line[norm] = max(line.get(norm, 0), int(w.horizon))
    return {line: dict(sorted(norms.items())) for line, norms in out.items()}


def prefix_points(horizon: int, steps: int, log_points: int) -> int:
    """The log-spaced points of a run to ``horizon`` whose logged steps are those of a run to
    ``steps`` with ``log_points`` points, up to ``horizon`` (benign.synthetic.trainer.log_steps:
    np.geomspace(1, steps, log_points) rounded, ``horizon`` itself always logged): the same
    spacing, each step the same up to its rounding where ``horizon`` lies on that grid, as the
    fits' horizons do (tested)."""
    if horizon >= steps or log_points <= 1:
        return log_points
    return int(round((log_points - 1) * np.log(horizon) / np.log(steps))) + 1


def _coarse(runs: pd.DataFrame, curves: pd.DataFrame, horizons, criteria: Criteria):
    """The ok coarse runs, each once, and their labels at each horizon that some of them reach."""
    runs = runs[runs["status"] == "ok"].drop_duplicates("run_id")
    reached = [h for h in horizons if (runs["steps"] >= h).any()]
    return runs, regimes_at(curves[curves["run_id"].isin(runs["run_id"])], reached, criteria)


def _new_run(line: pd.Series, **values) -> dict:
    run = {k: _plain(line[k]) for k in RUN_FIELDS}
    if run["integrator"] == "gd":  # a run of gradient descent names no integrator, as the planned sweeps' do
        del run["integrator"], run["flow_tol"]
    return {**run, "log_every": 0, **values}


def refinement_runs(runs: pd.DataFrame, curves: pd.DataFrame, horizons, points: int, seeds, log_points: int,
                    criteria: Criteria, setting: str) -> list[dict]:  # fmt: skip
    """The refinement's runs (plain dicts, for the planner's jobs): the windows of the coarse
    ``runs`` at every horizon a line reaches; every seed of ``seeds`` and of the line at every
    window norm it has not run, trained to the latest horizon of the windows that hold the norm,
    logged at the steps of the line's ``log_points`` log-spaced steps up to there."""
    runs, labels = _coarse(runs, curves, horizons, criteria)
    found = windows(runs, labels)
    every = sorted({*map(int, seeds), *map(int, runs["seed"])})
    out = []
    for seed, offset in offsets(every).items():
        for (d, n), line_norms in _line_norms(found, points, offset).items():
            line = runs[(runs["d"] == d) & (runs["n"] == n)]
            have = {(int(r.seed), round(float(r.signal_norm), 6)) for r in line.itertuples()}
            first, steps = line.iloc[0], int(line["steps"].max())
            out += [_new_run(first, seed=seed, signal_norm=norm, steps=min(horizon, steps), setting=setting,
                             sweeps=[setting], log_points=prefix_points(horizon, steps, int(log_points)))
                    for norm, horizon in line_norms.items() if (seed, norm) not in have]  # fmt: skip
    return out


def convergence_runs(runs: pd.DataFrame, curves: pd.DataFrame, horizon: int, points: int, seeds, refined,
                     factor: int, log_points: int, criteria: Criteria, setting: str) -> list[dict]:  # fmt: skip
    """The step-convergence runs: for each of ``seeds``, on each line, the norms the refinement
    trains it at in the line's windows at ``horizon`` (:func:`refinement_runs` with the seeds
    ``refined``, whose offsets it takes), at the step divided by ``factor`` for ``factor`` times
    ``horizon`` steps: the normalised time of ``horizon`` (a flow line's tolerance divided by
    ``factor`` too: its first step and every later one finer)."""
    runs, labels = _coarse(runs, curves, [horizon], criteria)
    found = windows(runs, labels)
    spread = offsets({*map(int, refined), *map(int, runs["seed"])})
    out = []
    for seed in map(int, seeds):
        for (d, n), line_norms in _line_norms(found, points, spread[seed]).items():
            first = runs[(runs["d"] == d) & (runs["n"] == n)].iloc[0]
            step = {"step_size": float(first["step_size"]) / factor} if _plain(first["step_size"]) else {}
            if first["integrator"] == "flow":  # the flow's own resolution, its tolerance, refined as the step is
                step["flow_tol"] = float(first["flow_tol"]) / factor
            out += [_new_run(first, seed=seed, signal_norm=norm, steps=int(horizon * factor), setting=setting,
                             sweeps=[setting], log_points=int(log_points), lr=float(first["lr"]) / factor, **step)
                    for norm in line_norms]  # fmt: skip
    return out


def _plain(value):
    """A table cell as a plain JSON value (None for a missing one)."""
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return None
    return value.item() if hasattr(value, "item") else value
