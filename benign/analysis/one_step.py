"""The large-step regime of the paper's fixed learning rate (docs/regimes.md#the-one-step-regime):
what one gradient step already fits, per (n, ||mu||, d) cell."""

from __future__ import annotations

import pandas as pd

from benign.analysis.theory import Criteria, in_sweeps, overfits


def one_step_cells(runs: pd.DataFrame, sweep: str, criteria: Criteria | dict) -> pd.DataFrame:
    """Per (n, ||mu||, d) of the one-step sweep's ok runs: the mean share of flipped labels the
    first step fits, the share of seeds where it fits a fraction ``fit_threshold`` of them, the
    seeds, the step size lr sigma^2 d and the SNR."""
    criteria = Criteria(**criteria) if isinstance(criteria, dict) else criteria
    runs = runs[in_sweeps(runs, [sweep]) & (runs["status"] == "ok")].drop_duplicates("run_id")
    runs = runs.assign(fits=overfits(runs["train_acc_noisy"], criteria))
    return (
        runs.groupby(["n", "signal_norm", "d"])
        .agg(fitted=("train_acc_noisy", "mean"), share=("fits", "mean"), seeds=("seed", "nunique"),
             step_size=("step_size", "first"), lr=("lr", "first"), snr=("snr", "first"))
        .reset_index()
    )  # fmt: skip
