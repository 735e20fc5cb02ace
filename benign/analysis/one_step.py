"""The large-step regime of the paper's fixed learning rate (docs/regimes.md#the-one-step-regime):
what one gradient step already fits, per (n, ||mu||, d) cell."""

from __future__ import annotations

import pandas as pd

from benign.analysis.theory import Criteria, in_sweeps, overfits


def one_step_cells(runs: pd.DataFrame, curves: pd.DataFrame, sweep: str, criteria: Criteria | dict) -> pd.DataFrame:
    """Per (n, ||mu||, d) of the one-step sweep's ok runs: the mean share of flipped labels fitted
    after the first step, the share of seeds where that step fits a fraction ``fit_threshold`` of
    them that were not so fitted at initialisation (``share``: at a weak signal the fixed head
    fits some flipped labels by chance before any step, and that is not the step's doing; those
    seeds are counted in ``share_before``), the seeds, the step size lr sigma^2 d and the SNR."""
    criteria = Criteria(**criteria) if isinstance(criteria, dict) else criteria
    runs = runs[in_sweeps(runs, [sweep]) & (runs["status"] == "ok")].drop_duplicates("run_id")
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
