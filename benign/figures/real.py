"""Figures of the real-data experiments: the eta heatmap (Figure 8), attention concentration
during fine-tuning (Figure 9), and test accuracy over fine-tuning with the epoch at which the
noisy labels are memorised."""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from benign.analysis import metrics
from benign.core.notation import TEX, TEXT
from benign.figures import style


def _dataset_labels(real_runs: pd.DataFrame) -> dict[str, str]:
    """dataset -> 'label [backbone]', in first-appearance order: says what actually stands in."""
    labels = {}
    for _, row in real_runs.drop_duplicates("dataset").iterrows():
        labels[row["dataset"]] = f"{row['dataset_label']}\n[{str(row['backbone']).split('/')[-1]}]"
    return labels


def _cell_text(value: float) -> str:
    """A heatmap cell's number: 3 significant digits, a tiny one as 1.23e-5 (not 0.00)."""
    text = f"{value:.3g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}e{int(exponent)}"
    return text


@plt.rc_context(style.STYLE)
def real_eta_heatmap(real_runs: pd.DataFrame, stem: style.PathLike, sweep: dict | None = None) -> None:
    """Figure 8: train loss (noisy fine-tuning set, after training) and test loss, rows = datasets,
    columns = eta, annotated in 3 significant digits; mean over the seeds present. Rows are named
    by the data set's name, the note says what data and backbone each one is. ``sweep``:
    ``real.eta_sweep``, whose n and seed select the runs."""
    if sweep is not None:
        real_runs = real_runs[(real_runs["n"] == sweep["n"]) & (real_runs["seed"] == sweep["seed"])]
    if real_runs.empty:
        raise ValueError("no real-data runs")
    runs = real_runs.assign(eta=real_runs["eta"].round(4))
    for dataset, group in runs.groupby("dataset"):
        if group["n"].nunique() != 1:
            raise ValueError(f"{dataset}: eta-heatmap runs mix sizes n = {sorted(group['n'].unique())}")
    first = runs.drop_duplicates("dataset")
    datasets = list(first["dataset"])
    # what each row is, for the note: the data actually used and its backbone
    sources = [f"{d}: {label}, backbone {str(backbone).split('/')[-1]}"
               for d, label, backbone in zip(first["dataset"], first["dataset_label"], first["backbone"])]  # fmt: skip
    etas = np.asarray(sorted(runs["eta"].unique()))
    panels = {"train_loss": "train loss (noisy fine-tuning set)", "test_loss": "test loss"}
    grids = [metrics.cell_grid(runs, "eta", "dataset", metric, x_values=etas, y_values=datasets) for metric in panels]
    fig, axes = plt.subplots(
        2, 1, figsize=(max(8.0, 0.55 * len(etas) + 3), 2 * (0.55 * len(datasets) + 1.4)), layout="constrained"
    )
    x_edges, y_edges = np.arange(len(etas) + 1) - 0.5, np.arange(len(datasets) + 1) - 0.5
    for ax, grid, label in zip(axes, grids, panels.values()):
        mesh = style.grid_panel(ax, x_edges, y_edges, grid, label)
        for (i, j), value in np.ndenumerate(grid.values.filled(np.nan)):
            if np.isfinite(value):
                shade = mesh.norm(value)
                ax.text(
                    j,
                    i,
                    _cell_text(value),
                    ha="center",
                    va="center",
                    fontsize=6,
                    color="black" if shade > 0.6 else "white",
                )
        ax.set_xticks(range(len(etas)), [f"{e:.2f}" for e in etas], rotation=90)
        ax.set_yticks(range(len(datasets)), datasets, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel(f"label-noise rate {TEX['eta']}")
        ax.set_title(label)
    handles = style.diverged_handle(grids)
    if handles:
        style.figure_legend(fig, handles, ncols=1)
    fig.suptitle("Real data: loss after fine-tuning the final layer's query and key")
    note = (
        f"n = {', '.join(str(int(v)) for v in sorted(runs['n'].unique()))} fine-tuning samples, "
        f"mean over {style.seeds_note(runs)}. Rows: {'; '.join(sources)}"
    )
    style.save(fig, stem, note)


@plt.rc_context(style.STYLE)
def real_attention_dynamics(real_attention: pd.DataFrame, real_runs: pd.DataFrame, stem: style.PathLike,
                            grid: dict | None = None) -> None:  # fmt: skip
    """Figure 9: mean max final-layer attention from position 0 vs epoch, one panel per dataset,
    one line per (n, eta) (colour = n, line style = eta), mean over seeds with status ok.
    ``grid``: ``real.grid``, whose n, seeds and eta select the runs."""
    real_runs = metrics.in_grid(real_runs, grid)
    real_attention = real_attention[real_attention["run_id"].isin(real_runs["run_id"])]
    ok, n_excluded = style.ok_runs(real_runs)
    trace = real_attention[real_attention["run_id"].isin(ok["run_id"])]
    style.require_finite(trace, ["max_attention"], "real-data attention")
    trace = trace.assign(eta=trace["eta"].round(4))
    labels = {k: v.replace("\n", " ") for k, v in _dataset_labels(real_runs).items() if k in set(trace["dataset"])}
    ns = sorted(trace["n"].unique())
    etas = sorted(trace["eta"].unique())
    colours = dict(zip(ns, plt.get_cmap("viridis")(np.linspace(0.0, 0.85, len(ns)))))
    styles = dict(zip(etas, ["-", "--", ":", "-."] * (len(etas) // 4 + 1)))
    ncols = min(3, max(1, len(labels)))
    nrows = -(-len(labels) // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(3.6 * ncols, 2.8 * nrows), squeeze=False, sharey=True, layout="constrained"
    )
    curves = metrics.attention_curves(trace)
    for ax, (dataset, label) in zip(axes.flat, labels.items()):
        for (n, eta), line in curves.loc[dataset].groupby(level=["n", "eta"]):
            ax.plot(line.index.get_level_values("epoch"), line.to_numpy(), color=colours[n], ls=styles[eta], lw=1.2)
        ax.set_title(textwrap.fill(label, 48), fontsize=8)
        ax.set_xlabel("epoch")
    for ax in axes[:, 0]:
        ax.set_ylabel("mean max attention\nfrom position 0")
    for ax in axes.flat[len(labels) :]:
        ax.set_visible(False)
    handles = [Line2D([], [], color=colours[n], lw=2, label=f"n = {n}") for n in ns]
    handles += [Line2D([], [], color="0.3", ls=styles[e], label=f"{TEX['eta']} = {e:g}") for e in etas]
    style.figure_legend(fig, handles, ncols=len(handles))
    fig.suptitle("Real data: final-layer attention concentration during fine-tuning")
    note = f"mean over {style.seeds_note(ok)} and over samples and heads" + style.excluded_note(n_excluded)
    style.save(fig, stem, note)


@plt.rc_context(style.STYLE)
def real_test_dynamics(real_curves: pd.DataFrame, real_runs: pd.DataFrame, stem: style.PathLike,
                       grid: dict | None = None) -> None:  # fmt: skip
    """Test accuracy over phase 2 at the recorded epochs (symlog axis: epoch 0 is before the
    first step), one panel per (data set, n), one line per eta (mean over seeds with status ok,
    the seeds thin). A marker on a line: the median epoch from which the noisy rows stay
    memorised, over the seeds that memorise them (how many do is in the legend's note). Dashed:
    the phase-1 baseline; dotted: the head with uniform attention. ``grid``: ``real.grid``."""
    real_runs = metrics.in_grid(real_runs, grid)
    ok, n_excluded = style.ok_runs(real_runs)
    curves = real_curves[real_curves["run_id"].isin(ok["run_id"])]
    style.require_finite(curves, ["test_acc"], "real-data test curves")
    if curves.empty:
        raise ValueError("no real-data test curves in real.grid")
    ok = ok.assign(eta=ok["eta"].round(4))
    curves = curves.assign(eta=curves["eta"].round(4))
    labels = {k: v.replace("\n", " ") for k, v in _dataset_labels(ok).items()}
    ns, etas = sorted(ok["n"].unique()), sorted(ok["eta"].unique())
    colours = dict(zip(etas, plt.get_cmap("plasma")(np.linspace(0.0, 0.8, len(etas)))))
    fig, axes = plt.subplots(len(labels), len(ns), figsize=(3.4 * len(ns), 2.5 * len(labels)), squeeze=False,
                             sharex=True, layout="constrained")  # fmt: skip
    memorised = []
    for row, (dataset, label) in enumerate(labels.items()):
        for col, n in enumerate(ns):
            ax = axes[row, col]
            memorised += _test_panel(ax, ok[(ok["dataset"] == dataset) & (ok["n"] == n)], curves, colours)
            ax.set_xscale("symlog", linthresh=1.0)
            ax.set_xlim(left=0)
            ax.set_title(textwrap.fill(f"{label}, n = {n}", 46), fontsize=7)
            if row == len(labels) - 1:
                ax.set_xlabel("phase-2 epoch")
            if col == 0:
                ax.set_ylabel("test accuracy (%)")
    handles = [Line2D([], [], color=colours[e], lw=2, label=f"{TEX['eta']} = {e:g}") for e in etas]
    handles += [
        Line2D([], [], color="0.3", marker="o", mfc="white", ls="", label="noisy rows memorised (median)"),
        Line2D([], [], color="0.35", ls="--", label="phase-1 baseline"),
        Line2D([], [], color="0.35", ls=":", label="uniform attention"),
    ]
    style.figure_legend(fig, handles, ncols=len(handles))
    fig.suptitle("Real data: test accuracy while the query and key fit the noisy labels")
    note = (
        f"mean over {style.seeds_note(ok)} (thin: each seed); seeds that memorise the noisy rows by the last epoch: "
        + "; ".join(memorised)
        + style.excluded_note(n_excluded)
    )
    style.save(fig, stem, textwrap.fill(note, 180))


def _test_panel(ax, runs: pd.DataFrame, curves: pd.DataFrame, colours: dict) -> list[str]:
    """One (data set, n) panel of :func:`real_test_dynamics`: each eta's seeds (thin) and mean,
    the median memorising epoch, the baseline and uniform-attention levels. Returns, per eta
    with noisy rows, how many seeds memorise them."""
    memorised = []
    for eta in colours:
        mine = runs[runs["eta"] == eta]
        lines = curves[curves["run_id"].isin(mine["run_id"])].pivot(index="epoch", columns="run_id",
                                                                    values="test_acc")  # fmt: skip
        if lines.empty:
            continue
        epochs = lines.index.to_numpy()
        ax.plot(epochs, 100 * lines.to_numpy(), color=colours[eta], lw=0.5, alpha=0.35)
        mean = 100 * lines.mean(axis=1).to_numpy()
        ax.plot(epochs, mean, color=colours[eta], lw=1.4)
        fitted = mine["noisy_fitted_epoch"].dropna()
        if len(fitted):
            at = float(np.median(fitted))
            ax.plot(at, np.interp(at, epochs, mean), marker="o", ms=5, mfc="white", mec=colours[eta], mew=1.4)
        if mine["n_noisy"].max() > 0:
            memorised.append(
                f"{runs['dataset'].iloc[0]} n={runs['n'].iloc[0]} {TEXT['eta']}={eta:g}: {len(fitted)}/{len(mine)}"
            )
    if len(runs):
        ax.axhline(100 * runs["baseline_acc"].mean(), color="0.35", ls="--", lw=0.8)
        ax.axhline(100 * runs["uniform_test_acc"].mean(), color="0.35", ls=":", lw=0.8)
    return memorised
