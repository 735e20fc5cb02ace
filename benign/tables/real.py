"""The real-data tables (Tables 2 and 6): our fine-tuning results beside the paper's numbers,
and a one-line reading per data set: does phase 2 fit the noisy labels, and does test
accuracy hold (benign) or fall (harmful) as eta or n grows."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TypedDict

import numpy as np
import pandas as pd

from benign.core.notation import TEXT
from benign.tables.common import MISSING, PathLike, pm, seed_stats, seeds_cell, write

ETA = TEXT["eta"]  # the label-noise rate, as the paper writes it


def _dataset_key(name) -> str | None:
    """Loose dataset name for matching the paper's names ('CIFAR-10' == 'cifar10')."""
    return re.sub(r"[^a-z0-9]", "", str(name).lower()) if isinstance(name, str) else None


# The paper's protocol (Section 6 and its appendix): clean pretraining rows per data set, and
# the backbone of each modality.
PAPER_PRETRAIN_SIZE = {"MNIST": 10000, "CIFAR-10": 10000, "AG-news": 10000, "PneumoniaMNIST": 3000, "TREC": 3000,
                       "BreastMNIST": 200}  # fmt: skip
PAPER_BACKBONES = "ViT-B/16 (ImageNet-21k) for images, bert-base-uncased for text"
FITS_LOSS = 0.05  # train loss at or below this on the noisy set: the noise is memorised
FALL_POINTS = 1.0  # a change in test accuracy smaller than this (or than 2 seed stds) is "holds"


def load_reference(path: PathLike) -> pd.DataFrame:
    """The paper's numbers (reference/table6.csv layout), keyed by (_key, n, eta)."""
    ref = pd.read_csv(path)
    ref = ref.assign(_key=ref["dataset"].map(_dataset_key), eta=ref["eta"].round(4))
    value_cols = [c for c in ref.columns if c.endswith(("_mean", "_std"))]
    return ref[["_key", "n", "eta", *value_cols]].rename(columns={c: f"paper_{c}" for c in value_cols})


def load_summary(path: PathLike) -> pd.DataFrame:
    """The paper's words for Table 2 (reference/table2_summary.csv): an empty n applies to every n."""
    ref = pd.read_csv(path, dtype={"train_loss": str, "test_acc": str})
    return ref.assign(_key=ref["dataset"].map(_dataset_key), eta=ref["eta"].round(4))


def _summary_cell(summary: pd.DataFrame | None, key, n: int, eta: float, column: str) -> str | None:
    if summary is None or key is None:
        return None
    hits = summary[(summary["_key"] == key) & (summary["eta"] == round(eta, 4))]
    hits = hits[hits["n"].isna() | (hits["n"] == n)]
    return f"{hits[column].iloc[0]} (text)" if len(hits) else None


def _change(rows: pd.DataFrame, prefix: str = "") -> tuple[float, float] | None:
    """(change in mean test accuracy from the first row to the last, 2 x the larger seed std)."""
    acc, std = rows[f"{prefix}test_acc_mean"].to_numpy(float), rows[f"{prefix}test_acc_std"].to_numpy(float)
    if len(rows) < 2 or not np.isfinite(acc[[0, -1]]).all():
        return None
    return acc[-1] - acc[0], 2 * np.nanmax(std[[0, -1]]) if np.isfinite(std[[0, -1]]).any() else 0.0


def _trend(change: tuple[float, float] | None, what: str, fits: bool) -> str | None:
    """Falls or holds; called harmful or benign only where the runs fit the noise."""
    if change is None:
        return None
    delta, noise = change
    if delta <= -max(FALL_POINTS, noise):
        verdict = "falls (harmful)" if fits else "falls"
    elif delta >= max(FALL_POINTS, noise):
        verdict = "rises"
    else:
        verdict = "holds (benign)" if fits else "holds"
    return f"as {what}, test accuracy {verdict}: {delta:+.1f} points (2 seed stds: {noise:.1f})"


def reading(rows: pd.DataFrame, prefix: str = "") -> str:
    """One data set's rows (one table): fit of the noise, then the trend in eta (at the largest n)
    and in n (at the largest eta). ``prefix`` "paper_" reads the paper's columns instead."""
    noisy = rows[rows["eta"] > 0]
    loss = noisy[f"{prefix}train_loss_mean"].to_numpy(float)
    parts, fits = [], False
    if np.isfinite(loss).any():
        fits = bool(np.nanmax(loss) <= FITS_LOSS)
        worst = noisy.iloc[int(np.nanargmax(loss))]
        if fits:
            parts.append(f"fits the noisy labels (train loss <= {np.nanmax(loss):.3f} at every n, {ETA} > 0)")
        else:
            parts.append(
                f"does not fit all noisy labels (train loss {np.nanmax(loss):.3f} at n {int(worst['n'])}, {ETA} {worst['eta']:g})"
            )
    n_max, eta_max = rows["n"].max(), rows["eta"].max()
    by_eta = rows[rows["n"] == n_max].sort_values("eta")
    by_n = rows[rows["eta"] == eta_max].sort_values("n")
    etas = by_eta["eta"]
    parts.append(
        _trend(_change(by_eta, prefix), f"{ETA} grows {etas.iloc[0]:g} -> {etas.iloc[-1]:g} at n {n_max}", fits)
        if len(by_eta) > 1
        else None
    )
    parts.append(
        _trend(_change(by_n, prefix), f"n grows {by_n['n'].iloc[0]} -> {n_max} at {ETA} {eta_max:g}", fits)
        if len(by_n) > 1
        else None
    )
    parts = [p for p in parts if p]
    return "; ".join(parts) if parts else "no numbers"


class GridView(TypedDict):
    """What :func:`grid_view` gives."""

    real_runs: pd.DataFrame


def grid_view(real_runs: pd.DataFrame, grid: dict) -> GridView:
    """The runs of the main grid (``real.grid``'s n and seeds): what Tables 2 and 6 read
    (benign.artifacts)."""
    return GridView(real_runs=real_runs[real_runs["n"].isin(grid["n"]) & real_runs["seed"].isin(grid["seeds"])])


def real_results(
    real_runs: pd.DataFrame,
    reference_csv: PathLike,
    stem: PathLike,
    etas: Sequence[float],
    summary_csv: PathLike | None = None,
    notes: dict[str, str] | None = None,
) -> pd.DataFrame:
    """Tables 2 and 6: per (dataset, n, eta) with eta in ``etas``: last-epoch train loss and
    test accuracy (%) as mean ± population std over seeds, baseline accuracy (%), and the
    paper's numbers beside ours where ``paper_dataset`` names a dataset of ``reference_csv``
    (or, in words, of ``summary_csv`` where the paper published no numbers). ``notes``: per
    data set, a sentence for the header (a data set entry's ``note``)."""
    runs = _percent_runs(real_runs, etas)
    table = seed_stats(runs, ["dataset", "n", "eta"], ["baseline_acc", "train_loss_last_epoch", "test_acc"])
    table = _with_paper(table.rename(columns=lambda c: c.replace("train_loss_last_epoch", "train_loss")), runs,
                        reference_csv)  # fmt: skip
    summary = load_summary(summary_csv) if summary_csv is not None else None
    header = _header(table, runs, etas, notes, reference_csv, summary_csv)
    write(table, _display(table, summary), header, stem, footer=[_readings(table)])
    return table


def _percent_runs(real_runs: pd.DataFrame, etas: Sequence[float]) -> pd.DataFrame:
    """The runs at ``etas``, accuracies in %, in the order (data set as first met, n, eta)."""
    runs = real_runs.assign(eta=real_runs["eta"].round(4))
    runs = runs[runs["eta"].isin([round(e, 4) for e in etas])]
    accuracy = runs[["baseline_acc", "test_acc"]].to_numpy(dtype=float)
    if (accuracy[np.isfinite(accuracy)] > 1).any():
        raise ValueError("REAL_RUNS accuracies must be fractions in [0, 1]")
    runs = runs.assign(baseline_acc=runs["baseline_acc"] * 100, test_acc=runs["test_acc"] * 100)
    order = {d: i for i, d in enumerate(runs["dataset"].unique())}
    return runs.sort_values(
        ["dataset", "n", "eta"], key=lambda col: col.map(order) if col.name == "dataset" else col, kind="stable"
    )


def _with_paper(table: pd.DataFrame, runs: pd.DataFrame, reference_csv: PathLike) -> pd.DataFrame:
    """The seed statistics with each data set's protocol and the paper's numbers beside them."""
    protocol = ["dataset_label", "backbone", "paper_dataset", "pretrain_size", "pretrain_epochs", "finetune_epochs"]
    table = table.join(runs.groupby("dataset", sort=False)[protocol].first(), on="dataset")
    table["_key"] = table["paper_dataset"].map(_dataset_key)
    table = table.merge(load_reference(reference_csv), on=["_key", "n", "eta"], how="left").drop(columns="_key")
    table["paper_pretrain_size"] = table["paper_dataset"].map(PAPER_PRETRAIN_SIZE)
    front = ["dataset", "dataset_label", "backbone", "paper_dataset", "pretrain_size", "paper_pretrain_size", "n",
             "eta", "seeds", "failed"]  # fmt: skip
    return table[front + [c for c in table.columns if c not in front]]


def _display(table: pd.DataFrame, summary) -> pd.DataFrame:
    """The table as the Markdown shows it: ours, then the paper's (its words where it published no number)."""

    def pm_column(prefix: str, col: str, digits: int) -> pd.Series:
        return pd.Series([pm(m, s, digits) for m, s in zip(table[f"{prefix}{col}_mean"], table[f"{prefix}{col}_std"])])

    def paper_column(col: str, digits: int) -> pd.Series:
        cells = pm_column("paper_", col, digits)
        for i, row in table.iterrows():
            if cells[i] == MISSING:
                words = _summary_cell(summary, _dataset_key(row["paper_dataset"]), row["n"], row["eta"], col)
                cells[i] = words or MISSING
        return cells

    return pd.DataFrame(
        {
            "Dataset": table["dataset_label"],
            "Backbone": table["backbone"],
            "n": table["n"],
            ETA: table["eta"].map("{:g}".format),
            "Seeds": seeds_cell(table),
            "Baseline acc (%)": pm_column("", "baseline_acc", 2),
            "Train loss": pm_column("", "train_loss", 3),
            "Test acc (%)": pm_column("", "test_acc", 1),
            "Paper baseline (%)": pm_column("paper_", "baseline_acc", 2),
            "Paper train loss": paper_column("train_loss", 2),
            "Paper test acc (%)": paper_column("test_acc", 1),
        }
    )


def _protocol_lines(table: pd.DataFrame, notes: dict | None) -> list[str]:
    """Per data set, its pretraining size beside the paper's, and its note; then the epochs."""
    first = table.groupby("dataset", sort=False).first()
    lines = []
    for dataset, row in first.iterrows():
        size = f"{row['dataset_label']} pretrains on {int(row['pretrain_size'])} clean rows"
        paper = row["paper_pretrain_size"]
        if isinstance(row["paper_dataset"], str) and np.isfinite(paper):
            size += f" (the paper's {row['paper_dataset']}: {int(paper)})"
            size += (f"; it is the paper's data set on a different backbone ({row['backbone']}; the paper: "
                     f"{PAPER_BACKBONES}), so compare its trends with the paper's, not its levels")  # fmt: skip
        note = (notes or {}).get(dataset)
        lines.append(size + (f". {note}" if note else "") + ".")
    epochs = {(int(r["pretrain_epochs"]), int(r["finetune_epochs"])) for _, r in first.iterrows()}
    pairs = ", ".join(f"{a} and {b}" for a, b in sorted(epochs))
    return [*lines, f"Epochs of phase 1 (head) and phase 2 (query/key): {pairs} (the paper: 300 and 2000)."]


def _header(table, runs, etas, notes, reference_csv: PathLike, summary_csv: PathLike | None) -> list[str]:
    """The Markdown's heading and notes: backbones, protocol, seeds, where the paper's numbers come from."""
    seeds = ", ".join(str(int(s)) for s in sorted(runs.loc[runs["status"] == "ok", "seed"].unique()))
    backbones = "; ".join(
        f"{backbone}: {', '.join(group['dataset_label'].unique())}"
        for backbone, group in table.groupby("backbone", sort=False)
    )
    sources = Path(reference_csv).name + (f" and, in words, {Path(summary_csv).name}" if summary_csv else "")
    return [
        f"## Real data, {ETA} ∈ {{{', '.join(f'{e:g}' for e in etas)}}}",
        f"Backbones and the datasets actually run on them (stand-ins as labelled): {backbones}.",
        *_protocol_lines(table, notes),
        "Train loss: mean over the last epoch's batches on the noisy fine-tuning set. Accuracies in %. "
        f"Mean ± population std over seeds {seeds}. Baseline: test accuracy after training the head on clean data.",
        f"Paper columns: the authors' published numbers ({sources}); {MISSING} where they published none.",
    ]


def _readings(table: pd.DataFrame) -> str:
    """The footer: what the numbers say per data set, ours and the paper's."""
    readings = ["Reading (fits: train loss <= "
                f"{FITS_LOSS} at every noisy row; a change in test accuracy counts when larger than "
                f"{FALL_POINTS:g} point and 2 seed stds):"]  # fmt: skip
    for _, rows in table.groupby("dataset", sort=False):
        line = f"- {rows['dataset_label'].iloc[0]}: {reading(rows)}"
        if rows["paper_test_acc_mean"].notna().any():
            line += f". Paper: {reading(rows, 'paper_')}"
        readings.append(line + ".")
    return "\n".join(readings)
