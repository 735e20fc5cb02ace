"""Refinement of the atlas around its transitions (docs/regimes.md#refinement).

The coarse atlas samples ||mu|| on a factor-sqrt(2) grid. After it has run, each (d, n) line is
refined around each transition of each boundary: where the seeds' mean label crosses 1/2
between two neighbouring coarse norms, ``points`` geometric norms are added between them, every
seed of the line trained there to the refinement horizon. With a factor sqrt(2) and 3 points the
line is then sampled at a factor 2^(1/8) around its transition. New runs are new jobs, planned
from the coarse results (a Snakemake checkpoint), so a rerun plans the same jobs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign.analysis.boundaries import BOUNDARIES
from benign.analysis.theory import Criteria, regimes_at
from benign.synthetic import spec

# label column, negated: of each boundary the regime-boundaries table fits
SIDES = {name: (column, negate) for name, column, negate, *_ in BOUNDARIES}
RUN_FIELDS = tuple(k for k in spec.NUMBERS if k not in ("signal_norm", "steps"))  # a run of the line, at any norm


def crossings(norms: np.ndarray, mean_side: np.ndarray) -> list[tuple[float, float]]:
    """Neighbouring norm pairs (sorted) between which the mean label crosses 1/2."""
    order = np.argsort(norms)
    norms, above = norms[order], mean_side[order] >= 0.5
    return [(float(norms[i]), float(norms[i + 1])) for i in range(len(norms) - 1) if above[i] != above[i + 1]]


def refinement_norms(runs: pd.DataFrame, labels: pd.DataFrame, points: int) -> pd.DataFrame:
    """(d, n, signal_norm) of the norms to add: ``points`` geometric norms inside each crossing
    of each boundary on each (d, n) line, norms already run left out."""
    cells = labels.merge(runs[["run_id", "d", "n", "signal_norm"]], on="run_id")
    rows = set()
    for column, negate in SIDES.values():
        side = ~cells[column].astype(bool) if negate else cells[column].astype(bool)
        mean = cells.assign(side=side).groupby(["d", "n", "signal_norm"])["side"].mean().reset_index()
        for (d, n), line in mean.groupby(["d", "n"]):
            have = set(np.round(line["signal_norm"].to_numpy(float), 6))
            for low, high in crossings(line["signal_norm"].to_numpy(float), line["side"].to_numpy(float)):
                for j in range(1, points + 1):
                    norm = round(float(low * (high / low) ** (j / (points + 1))), 6)
                    if norm not in have:
                        rows.add((int(d), int(n), norm))
    return pd.DataFrame(sorted(rows), columns=["d", "n", "signal_norm"])


def refinement_runs(runs: pd.DataFrame, curves: pd.DataFrame, horizon: int, points: int, log_points: int,
                    criteria: Criteria, setting: str) -> list[dict]:  # fmt: skip
    """The refinement's runs (plain dicts, for the planner's jobs): labels at ``horizon`` of the
    coarse ``runs`` (ok, each once), new norms by :func:`refinement_norms`, every seed of the
    line, trained to ``horizon`` with ``log_points`` log-spaced logged steps."""
    runs = runs[(runs["status"] == "ok") & (runs["steps"] >= horizon)].drop_duplicates("run_id")
    labels = regimes_at(curves[curves["run_id"].isin(runs["run_id"])], [horizon], criteria)
    norms = refinement_norms(runs, labels, points)
    out = []
    for (d, n), new in norms.groupby(["d", "n"]):
        line = runs[(runs["d"] == d) & (runs["n"] == n)].drop_duplicates("seed").sort_values("seed")
        for _, run in line.iterrows():
            base = {k: _plain(run[k]) for k in RUN_FIELDS}
            out += [{**base, "signal_norm": float(norm), "steps": int(horizon), "setting": setting,
                     "sweeps": [setting], "log_every": 0, "log_points": int(log_points)}
                    for norm in new["signal_norm"]]  # fmt: skip
    return out


def _plain(value):
    """A table cell as a plain JSON value (None for a missing one)."""
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return None
    return value.item() if hasattr(value, "item") else value
