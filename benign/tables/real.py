"""The real-data tables (Tables 2 and 6): our fine-tuning results beside the paper's numbers."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from benign.tables.common import MISSING, PathLike, pm, seed_stats, seeds_cell, write


def _dataset_key(name) -> str | None:
    """Loose dataset name for matching the paper's names ('CIFAR-10' == 'cifar10')."""
    return re.sub(r"[^a-z0-9]", "", str(name).lower()) if isinstance(name, str) else None


def load_reference(path: PathLike) -> pd.DataFrame:
    """The paper's numbers (reference/table6.csv layout), keyed by (_key, n, eta)."""
    ref = pd.read_csv(path)
    ref = ref.assign(_key=ref["dataset"].map(_dataset_key), eta=ref["eta"].round(4))
    value_cols = [c for c in ref.columns if c.endswith(("_mean", "_std"))]
    return ref[["_key", "n", "eta", *value_cols]].rename(columns={c: f"paper_{c}" for c in value_cols})


def real_results(
    real_runs: pd.DataFrame, reference_csv: PathLike, stem: PathLike, etas: Sequence[float]
) -> pd.DataFrame:
    """Tables 2 and 6: per (dataset, n, eta) with eta in ``etas``: last-epoch train loss and
    test accuracy (%) as mean ± population std over seeds, baseline accuracy (%), and the
    paper's numbers beside ours where ``paper_dataset`` names a dataset of ``reference_csv``."""
    runs = real_runs.assign(eta=real_runs["eta"].round(4))
    runs = runs[runs["eta"].isin([round(e, 4) for e in etas])]
    accuracy = runs[["baseline_acc", "test_acc"]].to_numpy(dtype=float)
    if (accuracy[np.isfinite(accuracy)] > 1).any():
        raise ValueError("REAL_RUNS accuracies must be fractions in [0, 1]")
    runs = runs.assign(baseline_acc=runs["baseline_acc"] * 100, test_acc=runs["test_acc"] * 100)
    order = {d: i for i, d in enumerate(runs["dataset"].unique())}
    runs = runs.sort_values(
        ["dataset", "n", "eta"], key=lambda col: col.map(order) if col.name == "dataset" else col, kind="stable"
    )
    keys = ["dataset", "n", "eta"]
    table = seed_stats(runs, keys, ["baseline_acc", "train_loss_last_epoch", "test_acc"])
    table = table.rename(columns=lambda c: c.replace("train_loss_last_epoch", "train_loss"))
    labels = runs.groupby("dataset", sort=False)[["dataset_label", "backbone", "paper_dataset"]].first()
    table = table.join(labels, on="dataset")
    table["_key"] = table["paper_dataset"].map(_dataset_key)
    table = table.merge(load_reference(reference_csv), on=["_key", "n", "eta"], how="left").drop(columns="_key")
    front = ["dataset", "dataset_label", "backbone", "paper_dataset", "n", "eta", "seeds", "failed"]
    table = table[front + [c for c in table.columns if c not in front]]

    def pm_column(prefix: str, col: str, digits: int) -> pd.Series:
        return pd.Series([pm(m, s, digits) for m, s in zip(table[f"{prefix}{col}_mean"], table[f"{prefix}{col}_std"])])

    display = pd.DataFrame(
        {
            "Dataset": table["dataset_label"],
            "Backbone": table["backbone"],
            "n": table["n"],
            "η": table["eta"].map("{:g}".format),
            "Seeds": seeds_cell(table),
            "Baseline acc (%)": pm_column("", "baseline_acc", 2),
            "Train loss": pm_column("", "train_loss", 3),
            "Test acc (%)": pm_column("", "test_acc", 1),
            "Paper baseline (%)": pm_column("paper_", "baseline_acc", 2),
            "Paper train loss": pm_column("paper_", "train_loss", 2),
            "Paper test acc (%)": pm_column("paper_", "test_acc", 1),
        }
    )
    seeds = ", ".join(str(int(s)) for s in sorted(runs.loc[runs["status"] == "ok", "seed"].unique()))
    backbones = "; ".join(
        f"{backbone}: {', '.join(group['dataset_label'].unique())}"
        for backbone, group in table.groupby("backbone", sort=False)
    )
    header = [
        f"## Real data, η ∈ {{{', '.join(f'{e:g}' for e in etas)}}}",
        f"Backbones and the datasets actually run on them (stand-ins as labelled): {backbones}.",
        "Train loss: mean over the last epoch's batches on the noisy fine-tuning set. Accuracies in %. "
        f"Mean ± population std over seeds {seeds}. Baseline: test accuracy after training the head on clean data.",
        f"Paper columns: the authors' published numbers ({Path(reference_csv).name}); {MISSING} where they published none.",
    ]
    write(table, display, header, stem)
    return table
