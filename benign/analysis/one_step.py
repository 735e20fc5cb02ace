"""The large-step regime of the paper's fixed learning rate (docs/regimes.md#the-one-step-regime):
what one gradient step already fits, per (n, ||mu||, d) cell."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign.analysis.theory import Criteria, ok_runs_of, overfits


def one_step_cells(runs: pd.DataFrame, curves: pd.DataFrame, sweep: str, criteria: Criteria | dict) -> pd.DataFrame:
    """Per (n, ||mu||, d) of the one-step sweep's ok runs: the mean share of flipped labels fitted
    after the first step, the share of seeds where that step fits a fraction ``fit_threshold`` of
    them that were not so fitted at initialisation (``share``: at a weak signal the fixed head
    fits some flipped labels by chance before any step, and that is not the step's doing; those
    seeds are counted in ``share_before``), the seeds, the step size lr sigma^2 d and the SNR."""
    criteria = Criteria(**criteria) if isinstance(criteria, dict) else criteria
    runs = ok_runs_of(runs, [sweep])
    start = curves[curves["run_id"].isin(runs["run_id"]) & (curves["step"] == 0)].set_index("run_id")
    before = overfits(runs["run_id"].map(start["train_acc_noisy"]), criteria)
    after = overfits(runs["train_acc_noisy"], criteria)
    runs = runs.assign(fits=after & ~before, before=before)
    return (
        runs.groupby(["n", "signal_norm", "d"])
        .agg(fitted=("train_acc_noisy", "mean"), share=("fits", "mean"), share_before=("before", "mean"),
             seeds=("seed", "nunique"), step_size=("step_size", "first"), lr=("lr", "first"), snr=("snr", "first"))
        .reset_index()
    )  # fmt: skip


MAP_COLUMNS = ["n", "signal_norm", "d_star", "step_size_star", "snr_star", "snr_sqrt_n_star", "lr", "d_max",
               "fitted_at_d_max", "seeds", "fitted_before_any_step"]  # fmt: skip


def one_step_map(cells: pd.DataFrame) -> pd.DataFrame:
    """One row per (n, ||mu||) of :func:`one_step_cells`: the least d from which the first step
    fits on at least half of the seeds at that d and every larger one (d*, NaN where none), the
    step size, SNR and SNR sqrt(n) there, and the share fitted at the largest d."""
    rows = []
    for (n, norm), line in cells.groupby(["n", "signal_norm"]):
        line = line.sort_values("d")
        fits = line["share"].to_numpy(float) >= 0.5
        tail = np.flatnonzero(~fits)
        first = 0 if not len(tail) else tail[-1] + 1
        hit = line.iloc[first] if first < len(line) else None
        rows.append({"n": int(n), "signal_norm": float(norm), "d_star": float(hit["d"]) if hit is not None else np.nan,
                     "step_size_star": float(hit["step_size"]) if hit is not None else np.nan,
                     "snr_star": float(hit["snr"]) if hit is not None else np.nan,
                     "snr_sqrt_n_star": float(hit["snr"] * np.sqrt(n)) if hit is not None else np.nan,
                     "lr": float(line["lr"].iloc[0]), "d_max": float(line["d"].max()),
                     "fitted_at_d_max": float(line["fitted"].iloc[-1]), "seeds": int(line["seeds"].min()),
                     "fitted_before_any_step": float(line["share_before"].mean())})  # fmt: skip
    return pd.DataFrame(rows, columns=MAP_COLUMNS)
