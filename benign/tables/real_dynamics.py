"""The real-data dynamics table: per (data set, n, eta), where test accuracy peaks during phase 2,
what is left at the end, when the noisy labels are memorised, and what re-initialising the
query and key costs at the start (docs/real_protocol.md#test-metrics-over-training)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign.analysis.metrics import in_grid
from benign.core.notation import TEXT
from benign.tables.common import MISSING, PathLike, num, pm, seed_stats, seeds_cell, write

KEYS = ["dataset", "n", "eta"]
MEANS = ["baseline_acc", "reinit_test_acc", "uniform_test_acc", "attention_share", "peak_test_acc", "test_acc",
         "acc_lost"]  # fmt: skip


def at_fit(real_runs: pd.DataFrame, real_curves: pd.DataFrame) -> pd.DataFrame:
    """``real_runs`` with, per run whose noisy rows are memorised, the test accuracy lost from the
    peak to the memorising epoch (``fall_before_fit``) and from then to the end (``fall_after_fit``)."""
    acc_at = {}
    for run_id, curve in real_curves.groupby("run_id"):
        acc_at[run_id] = curve.set_index("epoch")["test_acc"]
    before, after = [], []
    for run in real_runs.itertuples():
        fit = run.noisy_fitted_epoch
        if not np.isfinite(fit) or run.run_id not in acc_at:
            before.append(np.nan), after.append(np.nan)
            continue
        acc = float(acc_at[run.run_id].loc[int(fit)])
        before.append(run.peak_test_acc - acc if fit >= run.peak_epoch else 0.0)
        after.append((acc if fit >= run.peak_epoch else run.peak_test_acc) - run.test_acc)
    return real_runs.assign(fall_before_fit=before, fall_after_fit=after)


HEADER = [
    "## Real data: test accuracy over phase 2",
    "Test accuracy (%) at the recorded epochs of phase 2 (about 30, log-spaced, epoch 0 before the first step), "
    "mean ± std over seeds. Baseline: the phase-1 head with the backbone's own attention. Epoch 0: the same head "
    "with the re-initialised query and key. Uniform attention: the same head, position 0 attending equally to every "
    "real token. Attention share: with the backbone's own attention, the attention branch's share of the norm at "
    "position 0 (|branch| / (|branch| + |residual|)). Peak: the best recorded test accuracy, and the epochs (range "
    "over seeds) where it falls. Lost: peak less final. The noisy rows are memorised from the first recorded epoch "
    "from which every flipped label stays predicted; a run that has not memorised them by the last epoch is censored, "
    "counted in the cell, never dropped. Lost before / after memorising: the mean fall from the peak to that epoch "
    "and from it to the end, over the runs that memorise (points); a run that memorises before its peak counts its "
    "whole fall as after.",
]


def real_dynamics(
    real_runs: pd.DataFrame, real_curves: pd.DataFrame, stem: PathLike, grid: dict | None = None
) -> pd.DataFrame:
    """One row per (data set, n, eta) of ``grid`` (``real.grid``): means over seeds of the baseline,
    the epoch-0, uniform-attention, peak and final test accuracies, the peak's epochs, the
    memorising epochs (censored runs counted, never dropped) and how much of the fall comes
    after the memorising epoch."""
    real_runs = in_grid(real_runs, grid)
    if real_runs.empty:
        raise ValueError("no real-data runs in real.grid")
    table = _cells(at_fit(real_runs.assign(eta=real_runs["eta"].round(4)), real_curves))
    write(table, _display(table), HEADER, stem)
    return table


def _cells(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (data set, n, eta): the seed statistics, the ranges of the peak and memorising epochs,
    the memorising and censored counts, and the mean falls before and after memorising."""
    table = seed_stats(runs, KEYS, MEANS)
    ok = runs[runs["status"] == "ok"].groupby(KEYS, sort=False)
    table = table.merge(
        ok.agg(
            peak_epoch_min=("peak_epoch", "min"), peak_epoch_max=("peak_epoch", "max"),
            fit_epoch_min=("noisy_fitted_epoch", "min"), fit_epoch_max=("noisy_fitted_epoch", "max"),
            fitted=("noisy_fitted_epoch", "count"), censored=("noisy_censored", "sum"), noisy_rows=("n_noisy", "mean"),
            epochs=("finetune_epochs", "max"),
            fall_before_fit_mean=("fall_before_fit", "mean"), fall_after_fit_mean=("fall_after_fit", "mean"),
        ).reset_index(), on=KEYS, how="left",
    )  # fmt: skip
    labels = runs.groupby("dataset")["dataset_label"].first()  # from every run: a cell may have none ok
    return table.assign(label=table["dataset"].map(labels)).sort_values(KEYS, kind="stable").reset_index(drop=True)


def _display(table: pd.DataFrame) -> pd.DataFrame:
    """The table as the Markdown shows it (accuracies in %)."""

    def acc(col: str) -> pd.Series:
        return pd.Series([pm(100 * m, 100 * s, 1) for m, s in zip(table[f"{col}_mean"], table[f"{col}_std"])])

    return pd.DataFrame(
        {
            "Data set": table["label"],
            "n": table["n"],
            TEXT["eta"]: table["eta"].map("{:g}".format),
            "Seeds": seeds_cell(table),
            "Baseline": acc("baseline_acc"),
            "Epoch 0 (re-initialised)": acc("reinit_test_acc"),
            "Uniform attention": acc("uniform_test_acc"),
            "Attention share": table["attention_share_mean"].map(lambda v: num(v, 2)),
            "Peak": acc("peak_test_acc"),
            "Peak at epoch": [epoch_range(a, b) for a, b in zip(table["peak_epoch_min"], table["peak_epoch_max"])],
            "Final": acc("test_acc"),
            "Lost": acc("acc_lost"),
            "Noisy rows memorised from epoch": [fit_cell(r) for r in table.itertuples()],
            "Lost before / after memorising": [
                f"{num(100 * b, 1)} / {num(100 * a, 1)}" for b, a in zip(table["fall_before_fit_mean"], table["fall_after_fit_mean"])
            ],
        }
    )  # fmt: skip


def epoch_range(lo: float, hi: float) -> str:
    """'3', or '3–10' for a range over seeds, or '—'."""
    if not np.isfinite(lo):
        return MISSING
    return f"{lo:.0f}" if lo == hi else f"{lo:.0f}–{hi:.0f}"


def fit_cell(row) -> str:
    """The memorising epochs of a table row: their range, how many seeds are censored."""
    if not np.isfinite(row.noisy_rows):  # no run of the cell ended ok
        return MISSING
    if not row.noisy_rows:
        return "no noisy rows"
    fitted, censored = int(row.fitted), int(row.censored)
    cell = epoch_range(row.fit_epoch_min, row.fit_epoch_max) if fitted else f"not by epoch {int(row.epochs)}"
    return cell + (f" ({censored} of {fitted + censored} censored)" if censored and fitted else "")
