"""Tables (SPEC 6): each written as ``<stem>.csv`` (numbers) and ``<stem>.md`` (formatted), atomically.

Seed statistics use only runs with status "ok" (the others are counted in ``failed``);
the std is the population std (ddof = 0), as in the paper. A NaN among ok runs is not
skipped: it propagates to the cell, which Markdown shows as "—".
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from benign.io import atomic_path, write_text
from benign.theory import REGIME_LABELS, classify_regime, classify_regimes

PathLike = str | os.PathLike
MODEL_LABELS = {"token": "token selection", "encoder": "one-layer encoder"}
MISSING = "—"


def seed_stats(df: pd.DataFrame, keys: Sequence[str], columns: Sequence[str]) -> pd.DataFrame:
    """Per group of ``keys`` (first-appearance order): ``seeds`` (ok runs), ``failed`` (others)
    and ``<col>_mean`` / ``<col>_std`` (population std) of each column over the ok runs."""
    keys = list(keys)
    ok = df["status"] == "ok"
    counts = df.assign(_ok=ok).groupby(keys, sort=False)["_ok"].agg(seeds="sum", total="size")
    stats = {}
    for col in columns:
        grouped = df[ok].groupby(keys, sort=False)[col]
        stats[f"{col}_mean"] = grouped.agg(lambda s: np.mean(s.to_numpy(dtype=float)))
        stats[f"{col}_std"] = grouped.agg(lambda s: np.std(s.to_numpy(dtype=float), ddof=0))
    counts["failed"] = counts.pop("total") - counts["seeds"]
    return counts.join(pd.DataFrame(stats), how="left").reset_index()


def _pm(mean: float, std: float, digits: int) -> str:
    """'mean ± std', or '—' when there is no number."""
    if not np.isfinite(mean):
        return MISSING
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def _num(value: float, digits: int) -> str:
    return f"{value:.{digits}f}" if np.isfinite(value) else MISSING


def _markdown_table(df: pd.DataFrame) -> str:
    cells = df.astype(str).map(lambda s: s.replace("|", r"\|"))
    lines = ["| " + " | ".join(cells.columns) + " |", "|" + "|".join("---" for _ in cells.columns) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in cells.itertuples(index=False)]
    return "\n".join(lines)


def _write(table: pd.DataFrame, display: pd.DataFrame, header: Sequence[str], stem: PathLike) -> None:
    with atomic_path(Path(f"{os.fspath(stem)}.csv")) as tmp:
        table.to_csv(tmp, index=False)
    write_text(Path(f"{os.fspath(stem)}.md"), "\n\n".join([*header, _markdown_table(display)]) + "\n")


def _single(group: pd.DataFrame, col: str):
    values = group[col].unique()
    if len(values) != 1:
        raise ValueError(f"runs of one table row disagree on {col}: {sorted(values)}")
    return values[0]


# ---------------------------------------------------------------- synthetic


def synthetic_regimes(
    runs: pd.DataFrame,
    stem: PathLike,
    settings: Sequence[str] = ("harmful", "benign", "not_overfitting"),
    fit_threshold: float = 1.0,
    test_threshold: float = 0.9,
    curves: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per (model, named setting): parameters, SNR, mean final metrics over seeds,
    the regime of the means and the per-seed regimes (theory.classify_regime thresholds).
    With ``curves``, also the logged step from which each seed's flipped labels are fitted
    (fraction >= fit_threshold): when noise fitting sets in, which a final-step label hides."""
    runs = runs[runs["setting"].isin(settings)]
    rank = {**{m: i for i, m in enumerate(MODEL_LABELS)}, **{s: i for i, s in enumerate(settings)}}
    runs = runs.sort_values(["model", "setting"], key=lambda col: col.map(rank), kind="stable")
    metrics = ["train_loss", "test_loss", "train_acc", "test_acc", "train_acc_noisy"]
    table = seed_stats(runs, ["model", "setting"], metrics)
    params = ["d", "signal_norm", "n", "eta", "snr"]
    ok = runs[runs["status"] == "ok"].assign(
        _regime=lambda r: classify_regimes(r["train_acc_noisy"], r["test_acc"], fit_threshold, test_threshold)
    )
    rows = []
    for _, row in table.iterrows():
        group = runs[(runs["model"] == row["model"]) & (runs["setting"] == row["setting"])]
        ok_group = ok[(ok["model"] == row["model"]) & (ok["setting"] == row["setting"])]
        counts = ok_group["_regime"].fillna("none").value_counts()
        rows.append(
            {
                **{p: _single(group, p) for p in params},
                "flipped_fitted_from_step": _fit_steps(ok_group, curves, fit_threshold),
                "regime": classify_regime(row["train_acc_noisy_mean"], row["test_acc_mean"], fit_threshold, test_threshold),
                "seed_regimes": ", ".join(f"{k.replace('_', ' ')} ×{v}" for k, v in counts.items()),
            }
        )
    table = pd.concat([table[["model", "setting"]], pd.DataFrame(rows), table.drop(columns=["model", "setting"])], axis=1)
    display = pd.DataFrame(
        {
            "Model": table["model"].map(lambda m: MODEL_LABELS.get(m, m)),
            "Setting": table["setting"].map(lambda s: REGIME_LABELS.get(s, s)),
            "d": table["d"],
            "‖μ‖": table["signal_norm"].map("{:g}".format),
            "n": table["n"],
            "η": table["eta"].map("{:g}".format),
            "SNR": table["snr"].map("{:.3f}".format),
            "Seeds": _seeds_cell(table),
            "Train loss": table["train_loss_mean"].map(lambda v: _num(v, 3)),
            "Test loss": table["test_loss_mean"].map(lambda v: _num(v, 3)),
            "Train acc": table["train_acc_mean"].map(lambda v: _num(v, 3)),
            "Test acc": table["test_acc_mean"].map(lambda v: _num(v, 3)),
            "Flipped labels fitted": table["train_acc_noisy_mean"].map(lambda v: _num(v, 3)),
            "Regime": table["regime"].map(lambda r: REGIME_LABELS.get(r, MISSING)),
            "Per seed": table["seed_regimes"],
            "Flipped labels fitted from step": table["flipped_fitted_from_step"],
        }
    )
    if curves is None:
        display = display.drop(columns="Flipped labels fitted from step")
    header = [
        "## Synthetic data: regimes of the named settings",
        f"Final metrics, mean over seeds with status ok. Regime: not overfitting if the flipped training labels "
        f"are not all fitted (fraction < {fit_threshold:g}), else benign if test accuracy ≥ {test_threshold:g}, "
        "else harmful. SNR = ‖μ‖ / (σ √d)."
        + (" Flipped labels fitted from step: the first logged step at which a seed's flipped labels are "
           f"fitted (fraction ≥ {fit_threshold:g}), the range over seeds, and how many seeds got there."
           if curves is not None else ""),
    ]
    _write(table, display, header, stem)
    return table


def _fit_steps(ok_group: pd.DataFrame, curves: pd.DataFrame | None, fit_threshold: float) -> str:
    """'700–1000 (3 of 3 seeds)': the first logged step at which each run's flipped labels are
    fitted, over the group's runs; '' without curves."""
    if curves is None or ok_group.empty:
        return ""
    c = curves[curves["run_id"].isin(ok_group["run_id"])]
    reached = c[c["train_acc_noisy"] >= fit_threshold - 1e-9].groupby("run_id")["step"].min()
    total = ok_group["run_id"].nunique()
    if reached.empty:
        last = int(c["step"].max()) if len(c) else 0
        return f"never by step {last} (0 of {total} seeds)"
    lo, hi = int(reached.min()), int(reached.max())
    span = f"{lo}" if lo == hi else f"{lo}–{hi}"
    return f"{span} ({len(reached)} of {total} seeds)"


def _seeds_cell(table: pd.DataFrame) -> pd.Series:
    return pd.Series(
        [f"{s}" + (f" ({f} failed)" if f else "") for s, f in zip(table["seeds"], table["failed"])], index=table.index
    )


# ---------------------------------------------------------------- real data


def _dataset_key(name) -> str | None:
    """Loose dataset name for matching the paper's names ('CIFAR-10' == 'cifar10')."""
    return re.sub(r"[^a-z0-9]", "", str(name).lower()) if isinstance(name, str) else None


def load_reference(path: PathLike) -> pd.DataFrame:
    """The paper's numbers (reference/table6.csv layout), keyed by (_key, n, eta)."""
    ref = pd.read_csv(path)
    ref = ref.assign(_key=ref["dataset"].map(_dataset_key), eta=ref["eta"].round(4))
    value_cols = [c for c in ref.columns if c.endswith(("_mean", "_std"))]
    return ref[["_key", "n", "eta", *value_cols]].rename(columns={c: f"paper_{c}" for c in value_cols})


def real_results(real_runs: pd.DataFrame, reference_csv: PathLike, stem: PathLike, etas: Sequence[float]) -> pd.DataFrame:
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
    runs = runs.sort_values(["dataset", "n", "eta"], key=lambda col: col.map(order) if col.name == "dataset" else col, kind="stable")
    keys = ["dataset", "n", "eta"]
    table = seed_stats(runs, keys, ["baseline_acc", "train_loss_last_epoch", "test_acc"])
    table = table.rename(columns=lambda c: c.replace("train_loss_last_epoch", "train_loss"))
    labels = runs.groupby("dataset", sort=False)[["dataset_label", "backbone", "paper_dataset"]].first()
    table = table.join(labels, on="dataset")
    table["_key"] = table["paper_dataset"].map(_dataset_key)
    table = table.merge(load_reference(reference_csv), on=["_key", "n", "eta"], how="left").drop(columns="_key")
    front = ["dataset", "dataset_label", "backbone", "paper_dataset", "n", "eta", "seeds", "failed"]
    table = table[front + [c for c in table.columns if c not in front]]

    def pm(prefix: str, col: str, digits: int) -> pd.Series:
        return pd.Series([_pm(m, s, digits) for m, s in zip(table[f"{prefix}{col}_mean"], table[f"{prefix}{col}_std"])])

    display = pd.DataFrame(
        {
            "Dataset": table["dataset_label"],
            "Backbone": table["backbone"],
            "n": table["n"],
            "η": table["eta"].map("{:g}".format),
            "Seeds": _seeds_cell(table),
            "Baseline acc (%)": pm("", "baseline_acc", 2),
            "Train loss": pm("", "train_loss", 3),
            "Test acc (%)": pm("", "test_acc", 1),
            "Paper baseline (%)": pm("paper_", "baseline_acc", 2),
            "Paper train loss": pm("paper_", "train_loss", 2),
            "Paper test acc (%)": pm("paper_", "test_acc", 1),
        }
    )
    seeds = ", ".join(str(int(s)) for s in sorted(runs.loc[runs["status"] == "ok", "seed"].unique()))
    backbones = "; ".join(
        f"{backbone}: {', '.join(group['dataset_label'].unique())}" for backbone, group in table.groupby("backbone", sort=False)
    )
    header = [
        f"## Real data, η ∈ {{{', '.join(f'{e:g}' for e in etas)}}}",
        f"Backbones and the datasets actually run on them (stand-ins as labelled): {backbones}.",
        "Train loss: mean over the last epoch's batches on the noisy fine-tuning set. Accuracies in %. "
        f"Mean ± population std over seeds {seeds}. Baseline: test accuracy after training the head on clean data.",
        f"Paper columns: the authors' published numbers ({Path(reference_csv).name}); {MISSING} where they published none.",
    ]
    _write(table, display, header, stem)
    return table
