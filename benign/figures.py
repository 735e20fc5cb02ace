"""One plotting function per artifact (SPEC 6). Each takes schema tables and an output
path stem and writes ``<stem>.png`` and ``<stem>.pdf`` atomically.

Runs whose status is not "ok", and cells with a non-finite metric, are never drawn as
numbers: heatmaps mask them in a distinct colour labelled "diverged", line plots leave
such runs out and say so in the footnote.
"""

from __future__ import annotations

import os
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.patheffects import withStroke  # noqa: E402

from benign.io import atomic_path  # noqa: E402
from benign.synthetic import SyntheticConfig  # noqa: E402
from benign.theory import REGIME_LABELS, boundary_harmful, boundary_not_overfitting  # noqa: E402
from benign.token_projection import projection_accuracy  # noqa: E402

DPI = 150
STYLE = {
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.25,
    "pdf.fonttype": 42,
}
DIVERGED_COLOUR = "tab:red"
MODEL_LABELS = {"token": "token-selection model", "encoder": "one-layer transformer encoder"}
SYMBOLS = {
    "n": "n",
    "n_test": r"$n_{\rm test}$",
    "T": "T",
    "d": "d",
    "signal_norm": r"$\Vert\mu\Vert$",
    "rho": r"$\rho$",
    "eta": r"$\eta$",
    "sigma": r"$\sigma$",
    "lr": "lr",
    "steps": "steps",
    "mlp_dim": "MLP width",
}
NORM = r"$\Vert\mu\Vert$"
PathLike = str | os.PathLike

# Token styles of the softmax-dynamics figures (0-based token indices of benign.synthetic).
TOKEN_STYLES = {
    0: {"color": "tab:blue", "lw": 2.0, "label": "token 0: relevant"},
    1: {"color": "tab:green", "lw": 1.5, "label": "token 1: weakly relevant"},
    2: {"color": "tab:red", "lw": 1.5, "label": "token 2: weakly relevant, opposite class"},
    -1: {"color": "black", "lw": 1.0, "ls": "--", "label": "[CLS] itself"},
}
IRRELEVANT_STYLE = {"color": "0.65", "lw": 0.8, "label": "tokens 3..T-1: irrelevant"}


# ---------------------------------------------------------------- shared helpers


def _save(fig: plt.Figure, stem: PathLike, note: str) -> None:
    """Add the settings footnote below everything drawn, then write <stem>.png and <stem>.pdf atomically."""
    fig.draw_without_rendering()
    fig.set_layout_engine("none")  # freeze the layout, and pin the figure legends where it put them,
    for legend in fig.legends:  # else the tight crop below re-anchors them onto the footnote
        box = legend.get_window_extent().transformed(fig.transFigure.inverted())
        legend.set_bbox_to_anchor(box, transform=fig.transFigure)
    bottom = fig.get_tightbbox().y0 / fig.get_figheight()
    fig.text(0.5, bottom - 0.005, note, ha="center", va="top", fontsize=7, color="0.3")
    for ext in ("png", "pdf"):
        with atomic_path(Path(f"{os.fspath(stem)}.{ext}")) as tmp:
            metadata = {"CreationDate": None} if ext == "pdf" else None
            fig.savefig(tmp, format=ext, dpi=DPI, bbox_inches="tight", metadata=metadata)
    plt.close(fig)


def _settings_note(runs: pd.DataFrame, columns: Sequence[str]) -> str:
    """'n = 20, T = 8, ...' for the columns that take one value across ``runs``."""
    parts = []
    for col in columns:
        values = runs[col].dropna().unique()
        if len(values) == 1:
            parts.append(f"{SYMBOLS.get(col, col)} = {values[0]:g}")
    return ", ".join(parts)


def _seeds_note(runs: pd.DataFrame) -> str:
    seeds = sorted(int(s) for s in runs["seed"].unique())
    return f"{len(seeds)} seed{'s' if len(seeds) != 1 else ''} ({', '.join(map(str, seeds))})"


def _ok_runs(runs: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Runs with status "ok", and how many others were left out."""
    ok = runs["status"] == "ok"
    return runs[ok], int((~ok).sum())


def _excluded_note(n_excluded: int) -> str:
    return f"; {n_excluded} run(s) left out (status not ok)" if n_excluded else ""


def _require_finite(df: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    """Refuse to draw non-finite values that belong to runs marked ok."""
    values = df[list(columns)].to_numpy(dtype=float)
    if not np.isfinite(values).all():
        raise ValueError(f"{what}: non-finite values in runs whose status is ok")


def _figure_legend(fig: plt.Figure, handles: list, ncols: int) -> None:
    fig.legend(handles=handles, loc="outside lower center", ncols=ncols, frameon=False)


@dataclass
class Grid:
    """A metric averaged per cell of a two-way grid (rows ``y``, columns ``x``)."""

    x: np.ndarray
    y: np.ndarray
    values: np.ma.MaskedArray  # (len(y), len(x)); masked where no run or diverged
    diverged: np.ndarray  # bool (len(y), len(x)): a run in the cell is not ok or non-finite
    runs: np.ndarray  # int (len(y), len(x)): runs per cell


def cell_grid(df: pd.DataFrame, x: str, y: str, metric: str, x_values=None, y_values=None) -> Grid:
    """Mean of ``metric`` over the runs (seeds) in each (y, x) cell.

    A cell counts as diverged, and is masked, if any of its runs has status other than
    "ok" or a non-finite ``metric``: a partial mean over the surviving seeds would hide it.
    """
    bad = (df["status"] != "ok") | ~np.isfinite(df[metric].to_numpy(dtype=float))
    cells = (
        df.assign(_bad=bad.to_numpy(), _value=df[metric].to_numpy(dtype=float))
        .groupby([y, x])
        .agg(bad=("_bad", "any"), mean=("_value", "mean"), runs=("_value", "size"))
    )
    xs = np.asarray(sorted(df[x].unique()) if x_values is None else x_values)
    ys = np.asarray(sorted(df[y].unique()) if y_values is None else y_values)

    def table(col: str, fill):
        return cells[col].unstack(x).reindex(index=ys, columns=xs).fillna(fill).to_numpy()

    diverged = table("bad", False).astype(bool)
    runs = table("runs", 0).astype(int)
    mean = table("mean", np.nan).astype(float)
    values = np.ma.masked_array(np.where(diverged, np.nan, mean), mask=diverged | (runs == 0))
    return Grid(xs, ys, values, diverged, runs)


def _edges(values: np.ndarray) -> np.ndarray:
    """Cell edges around sorted cell centres."""
    v = np.asarray(values, dtype=float)
    if v.size == 1:
        return np.array([v[0] - 0.5, v[0] + 0.5])
    mid = (v[1:] + v[:-1]) / 2
    return np.concatenate([[2 * v[0] - mid[0]], mid, [2 * v[-1] - mid[-1]]])


def _grid_panel(ax, x_edges, y_edges, grid: Grid, label: str):
    """Draw ``grid`` with a colorbar; diverged cells in DIVERGED_COLOUR, cells with no run blank.
    A panel whose cells all hold one value gets that value written on it instead of a colorbar
    (a colour scale over a single value would only show matplotlib's padding)."""
    ax.set_facecolor("white")
    ax.grid(False)
    values = grid.values.compressed()
    constant = values.size > 0 and float(np.ptp(values)) == 0.0
    mesh = ax.pcolormesh(x_edges, y_edges, grid.values, cmap="viridis", shading="flat")
    if grid.diverged.any():
        ax.pcolormesh(
            x_edges, y_edges, np.ma.masked_array(np.ones(grid.diverged.shape), mask=~grid.diverged),
            cmap=ListedColormap([DIVERGED_COLOUR]), shading="flat",
        )
    if constant:
        ax.text(0.5, 0.5, f"{label}: {values[0]:.4g}\nin every cell", transform=ax.transAxes, ha="center", va="center",
                fontsize=9, bbox={"facecolor": "white", "alpha": 0.85, "edgecolor": "0.5"})  # fmt: skip
    else:
        ax.figure.colorbar(mesh, ax=ax, label=label, shrink=0.9)
    return mesh


def _diverged_handle(grids: Sequence[Grid]) -> list:
    cells = max(int(g.diverged.sum()) for g in grids)
    return [Patch(facecolor=DIVERGED_COLOUR, label=f"diverged / non-finite ({cells} cell{'s' if cells > 1 else ''})")] if cells else []


# ---------------------------------------------------------------- Figure 1


@plt.rc_context(STYLE)
def token_projection(points: pd.DataFrame, cfg: SyntheticConfig, stem: PathLike) -> None:
    """Figure 1: the token each input selects, projected on (mu_{-1}, mu_{+1}); train top, test bottom.

    ``points`` is ``benign.token_projection.token_projection(cfg, lambdas)``.
    """
    accuracy = projection_accuracy(points).set_index("setting")
    settings = list(accuracy.index)
    fig, axes = plt.subplots(
        2, len(settings), figsize=(3.2 * len(settings), 6.4), sharex=True, sharey=True, squeeze=False, layout="constrained"
    )
    colours = {1: "tab:blue", -1: "tab:orange"}
    for j, setting in enumerate(settings):
        lam = accuracy.loc[setting, "lam"]
        for i, split in enumerate(("train", "test")):
            ax = axes[i, j]
            sub = points[(points["setting"] == setting) & (points["split"] == split)]
            for label, colour in colours.items():
                for noisy, marker, size in ((False, "o", 14), (True, "X", 40)):
                    pts = sub[(sub["label_true"] == label) & (sub["noisy"] == noisy)]
                    ax.scatter(pts["proj_neg"], pts["proj_pos"], c=colour, marker=marker, s=size,
                               edgecolors="black" if noisy else "none", linewidths=0.5, alpha=0.8)
            # the fixed head nu scores a token by <x, mu_{+1}> - <x, mu_{-1}>: the diagonal
            ax.axline((0.0, 0.0), slope=1.0, color="0.35", ls="--", lw=0.9, zorder=0)
            acc = accuracy.loc[setting, f"{split}_acc"]
            head = f"{REGIME_LABELS.get(setting, setting)} ($\\lambda$ = {lam:g})\n" if i == 0 else ""
            ax.set_title(f"{head}{split}: accuracy {acc:.2f}")
            if i == 1:
                ax.set_xlabel(r"$\langle x_{\rm sel}, \mu_{-1}\rangle / \Vert\mu\Vert$")
            if j == 0:
                ax.set_ylabel(f"{split} set\n" + r"$\langle x_{\rm sel}, \mu_{+1}\rangle / \Vert\mu\Vert$")
    fig.suptitle("Token selected by a hand-set query (W = I), projected onto the class signals")
    handles = [
        Line2D([], [], ls="", marker="o", color=colours[1], label="true label +1"),
        Line2D([], [], ls="", marker="o", color=colours[-1], label="true label −1"),
        Line2D([], [], ls="", marker="X", color="0.5", markeredgecolor="black", label="training label flipped"),
        Line2D([], [], ls="--", color="0.35", label="decision boundary of the fixed head (all panels)"),
    ]
    _figure_legend(fig, handles, ncols=4)
    note = (
        f"n = {cfg.n} train / {cfg.n_test} test, T = {cfg.T}, d = {cfg.d}, {NORM} = {cfg.signal_norm:g}, "
        f"$\\rho$ = {cfg.rho:g}, $\\eta$ = {cfg.eta:g}, $\\sigma$ = {cfg.sigma:g}, seed {cfg.seed}; "
        r"p = $\mu_{+1} + \mu_{-1} + \lambda \sum_i \varepsilon_i$ (noise of token 2 for flipped samples, token 0 otherwise); "
        "train accuracy against the flipped labels"
    )
    _save(fig, stem, note)


# ---------------------------------------------------------------- softmax dynamics


@plt.rc_context(STYLE)
def softmax_dynamics(
    runs: pd.DataFrame,
    attention: pd.DataFrame,
    stem: PathLike,
    model: str = "token",
    settings: Sequence[str] = ("benign", "harmful", "not_overfitting"),
) -> None:
    """Figures 3 and 6: per-token softmax vs step for one clean and one noisy training sample.

    One column per named setting (``runs.setting``) of ``model``; each uses its lowest-seed
    run with status ok, and the lowest-index clean and noisy samples of that run.
    """
    runs = runs[(runs["model"] == model) & runs["setting"].isin(settings)]
    attention = attention[attention["run_id"].isin(runs["run_id"])]
    has_cls = bool((attention["token"] == -1).any())
    fig, axes = plt.subplots(2, len(settings), figsize=(3.4 * len(settings), 5.6), sharex=True, sharey=True,
                             squeeze=False, layout="constrained")
    chosen = []
    for j, setting in enumerate(settings):
        candidates, _ = _ok_runs(runs[runs["setting"] == setting])
        axes[0, j].set_title(REGIME_LABELS.get(setting, setting))
        if candidates.empty:
            for ax in axes[:, j]:
                ax.text(0.5, 0.5, "no run with status ok", ha="center", va="center", transform=ax.transAxes)
            continue
        run = candidates.sort_values("seed").iloc[0]
        chosen.append(run)
        axes[0, j].set_title(
            f"{REGIME_LABELS.get(setting, setting)}\nd = {run['d']}, {NORM} = {run['signal_norm']:g} (SNR = {run['snr']:.3f})"
        )
        trace = attention[attention["run_id"] == run["run_id"]]
        _require_finite(trace, ["probability"], f"attention of run {run['run_id']}")
        for i, noisy in enumerate((False, True)):
            ax = axes[i, j]
            samples = trace.loc[trace["noisy"] == noisy, "sample"]
            kind = "noisy" if noisy else "clean"
            if samples.empty:
                ax.text(0.5, 0.5, f"no {kind} sample", ha="center", va="center", transform=ax.transAxes)
                continue
            sample = int(samples.min())
            probs = trace[trace["sample"] == sample].pivot(index="step", columns="token", values="probability")
            for token in probs.columns:
                style = TOKEN_STYLES.get(token, IRRELEVANT_STYLE)
                ax.plot(probs.index, probs[token], **{k: v for k, v in style.items() if k != "label"}, zorder=3 if token in TOKEN_STYLES else 2)
            ax.text(0.98, 0.95, f"{kind} sample #{sample}", ha="right", va="top", transform=ax.transAxes, fontsize=8)
    for ax in axes[-1]:
        ax.set_xlabel("gradient step")
    for i, kind in enumerate(("clean", "noisy (flipped label)")):
        axes[i, 0].set_ylabel(f"{kind} sample\nsoftmax probability")
    axes[0, 0].set_ylim(-0.02, 1.02)
    handles = [Line2D([], [], **s) for t, s in TOKEN_STYLES.items() if t >= 0 or has_cls] + [Line2D([], [], **IRRELEVANT_STYLE)]
    _figure_legend(fig, handles, ncols=len(handles))
    fig.suptitle(f"Softmax over tokens during training, {MODEL_LABELS.get(model, model)}")
    chosen_df = pd.DataFrame(chosen) if chosen else runs
    note = _settings_note(chosen_df, ["n", "T", "rho", "eta", "sigma", "lr", "steps", "mlp_dim"])
    if chosen:
        note += f"; seed {', '.join(str(int(s)) for s in chosen_df['seed'].unique())}"
    if has_cls:
        note += "; attention of [CLS] over the input tokens and itself"
    _save(fig, stem, note)


# ---------------------------------------------------------------- loss heatmaps


@plt.rc_context(STYLE)
def loss_heatmap(
    runs: pd.DataFrame,
    stem: PathLike,
    c1: float,
    c2: float,
    setting: str = "heatmap",
    model: str = "token",
) -> None:
    """Figures 5 and 7: final train/test loss and accuracy over (d, ||mu||), mean over seeds,
    with the regime boundaries ||mu|| = c1 sqrt(d/n) and ||mu|| = c2 d^{1/4} overlaid."""
    runs = runs[(runs["model"] == model) & (runs["setting"] == setting)]
    if runs.empty:
        raise ValueError(f"no runs of model {model!r} with setting {setting!r}")
    ns = runs["n"].unique()
    if len(ns) != 1:
        raise ValueError(f"heatmap runs mix training-set sizes {sorted(ns)}; the boundary needs one n")
    n = int(ns[0])
    panels = {
        "train_loss": "final train loss",
        "test_loss": "final test loss",
        "train_acc": "final train accuracy (noisy labels)",
        "test_acc": "final test accuracy",
    }
    fig, axes = plt.subplots(2, 2, figsize=(10, 8), sharex=True, sharey=True, layout="constrained")
    grids = [cell_grid(runs, "d", "signal_norm", metric) for metric in panels]
    x_edges, y_edges = _edges(grids[0].x), _edges(grids[0].y)
    d_line = np.linspace(x_edges[0], x_edges[-1], 200)
    for ax, grid, label in zip(axes.flat, grids, panels.values()):
        _grid_panel(ax, x_edges, y_edges, grid, label)
        outline = [withStroke(linewidth=3.2, foreground="black")]
        ax.plot(d_line, boundary_not_overfitting(d_line, n, c1), color="white", lw=1.8, path_effects=outline)
        ax.plot(d_line, boundary_harmful(d_line, c2), color="white", lw=1.8, ls="--", path_effects=outline)
        ax.set_ylim(y_edges[0], y_edges[-1])
        ax.set_xlim(x_edges[0], x_edges[-1])
        ax.set_title(label)
    for ax in axes[-1]:
        ax.set_xlabel("token dimension d")
    for ax in axes[:, 0]:
        ax.set_ylabel(f"signal norm {NORM}")
    handles = [
        Line2D([], [], color="0.2", lw=1.8, label=f"{NORM} = $c_1\\sqrt{{d/n}}$, $c_1$ = {c1:g} (above: not overfitting)"),
        Line2D([], [], color="0.2", lw=1.8, ls="--", label=f"{NORM} = $c_2 d^{{1/4}}$, $c_2$ = {c2:g} (below: harmful)"),
    ] + _diverged_handle(grids)
    _figure_legend(fig, handles, ncols=len(handles))
    fig.suptitle(f"Final metrics over (d, {NORM}), {MODEL_LABELS.get(model, model)}")
    note = (
        f"{len(grids[0].x)} x {len(grids[0].y)} grid, mean over {_seeds_note(runs)} per cell; "
        + _settings_note(runs, ["n", "T", "rho", "eta", "sigma", "lr", "steps", "mlp_dim"])
        + "; a cell with any diverged or non-finite run is masked"
    )
    _save(fig, stem, note)


# ---------------------------------------------------------------- delayed generalization


# The token model's loss floor: every sample's attention wholly on its relevant token gives
# margin nu . mu_y = 1/sqrt(2) (SPEC 2), so the logistic loss cannot go below log(1 + e^{-1/sqrt 2}).
TOKEN_LOSS_FLOOR = float(np.log1p(np.exp(-1 / np.sqrt(2))))


def delayed_milestones(curves: pd.DataFrame) -> dict:
    """On the mean-over-runs curves: the first step at which the training set is fitted (train
    accuracy 1), and test accuracy and loss at the first logged step, at that step and at the
    last step. Missing values are None (e.g. never fitted)."""
    mean = curves.groupby("step")[["train_acc", "test_acc", "test_loss", "train_loss"]].mean().sort_index()
    fitted = mean.index[mean["train_acc"] >= 1.0 - 1e-9]
    fit = int(fitted[0]) if len(fitted) else None
    first, last = mean.index[0], mean.index[-1]
    return {
        "first_step": int(first),
        "fit_step": fit,
        "last_step": int(last),
        "test_acc_first": float(mean.loc[first, "test_acc"]),
        "test_acc_fit": float(mean.loc[fit, "test_acc"]) if fit is not None else None,
        "test_acc_last": float(mean.loc[last, "test_acc"]),
        "test_loss_fit": float(mean.loc[fit, "test_loss"]) if fit is not None else None,
        "test_loss_last": float(mean.loc[last, "test_loss"]),
        "train_loss_last": float(mean.loc[last, "train_loss"]),
    }


@plt.rc_context(STYLE)
def delayed_generalization(
    runs: pd.DataFrame,
    curves: pd.DataFrame,
    stem: PathLike,
    setting: str = "delayed",
    model: str = "token",
    test_threshold: float = 0.9,
) -> None:
    """Delayed generalization (the paper's Section 4 claim), two panels over gradient steps (log x axis), mean over seeds with a min-max band.
    Top: train accuracy (all, clean, flipped labels fitted) and test accuracy, with the steps at
    which the training set is first fitted and test accuracy first reaches ``test_threshold``.
    Bottom: train and test loss, with the token model's loss floor: in this model the fixed head
    classifies the uniform-attention mean token well from step 0, so what generalization adds
    after the fit shows in the test loss (the margin), which the panel quantifies."""
    selected = runs[(runs["model"] == model) & (runs["setting"] == setting)]
    ok, n_excluded = _ok_runs(selected)
    if ok.empty:
        raise ValueError(f"no run with status ok for model {model!r}, setting {setting!r}")
    lines = {
        "train_acc": ("train accuracy (all, noisy labels)", "tab:blue", "-"),
        "train_acc_clean": ("train accuracy, clean samples", "tab:green", "-"),
        "train_acc_noisy": ("flipped labels fitted", "tab:red", "-"),
        "test_acc": ("test accuracy", "black", "-"),
    }
    losses = {"train_loss": ("train loss (noisy labels)", "tab:blue", "-"), "test_loss": ("test loss", "black", "-")}
    c = curves[curves["run_id"].isin(ok["run_id"]) & (curves["step"] > 0)]
    _require_finite(c, list(lines) + list(losses), "delayed-generalization curves")
    stats = c.groupby("step")[list(lines) + list(losses)].agg(["mean", "min", "max"])
    milestones = delayed_milestones(c)
    fig, (ax, lx) = plt.subplots(2, 1, figsize=(6.4, 6.6), sharex=True, layout="constrained", height_ratios=[1.1, 1])
    for target_ax, group in ((ax, lines), (lx, losses)):
        for metric, (label, colour, ls) in group.items():
            target_ax.plot(stats.index, stats[(metric, "mean")], color=colour, ls=ls, lw=1.6, label=label)
            target_ax.fill_between(stats.index, stats[(metric, "min")], stats[(metric, "max")], color=colour, alpha=0.15, lw=0)
    for metric, level, text in (
        ("train_acc", 1.0, "training set fitted"),
        ("test_acc", test_threshold, f"test accuracy ≥ {test_threshold:g}"),
    ):
        reached = stats.index[stats[(metric, "mean")] >= level - 1e-9]
        if len(reached):
            for target_ax in (ax, lx):
                target_ax.axvline(reached[0], color=lines[metric][1], ls=":", lw=1.0)
            ax.annotate(f"{text}\n(step {reached[0]})", (reached[0], 0.02), xycoords=("data", "axes fraction"),
                        rotation=90, ha="right", va="bottom", fontsize=7, color=lines[metric][1])
    ax.set_xscale("log")
    ax.set_ylabel("accuracy")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=7, loc="center right", framealpha=0.9)
    if model == "token":
        lx.axhline(TOKEN_LOSS_FLOOR, color="0.4", ls="--", lw=1.0, label=f"loss floor log(1+e^(-1/√2)) = {TOKEN_LOSS_FLOOR:.3f}")
    m = milestones
    if m["fit_step"] is not None:
        text = (f"test loss {m['test_loss_fit']:.3f} when the training set is fitted (step {m['fit_step']}),\n"
                f"{m['test_loss_last']:.3f} at step {m['last_step']}; test accuracy {m['test_acc_first']:.3f} "
                f"at step {m['first_step']}, {m['test_acc_last']:.3f} at the end")  # fmt: skip
    else:
        text = f"training set not fitted by step {m['last_step']}; test loss {m['test_loss_last']:.3f} at the end"
    lx.text(0.02, 0.1, text, transform=lx.transAxes, fontsize=7, va="bottom",
            path_effects=[withStroke(linewidth=3, foreground="white")])  # fmt: skip
    lx.set_xlabel("gradient step (log scale)")
    lx.set_ylabel("logistic loss")
    lx.legend(fontsize=7, loc="upper right", framealpha=0.9)
    row = ok.iloc[0]
    ax.set_title(f"Delayed generalization, {MODEL_LABELS.get(model, model)}: d = {row['d']}, {NORM} = {row['signal_norm']:g}")
    note = (
        f"mean over {_seeds_note(ok)}, band = min to max; "
        + _settings_note(ok, ["n", "T", "d", "signal_norm", "rho", "eta", "lr", "steps", "mlp_dim"])
        + _excluded_note(n_excluded)
    )
    _save(fig, stem, note)


# ---------------------------------------------------------------- real data


def _dataset_labels(real_runs: pd.DataFrame) -> dict[str, str]:
    """dataset -> 'label [backbone]', in first-appearance order: says what actually stands in."""
    labels = {}
    for _, row in real_runs.drop_duplicates("dataset").iterrows():
        labels[row["dataset"]] = f"{row['dataset_label']}\n[{str(row['backbone']).split('/')[-1]}]"
    return labels


@plt.rc_context(STYLE)
def real_eta_heatmap(real_runs: pd.DataFrame, stem: PathLike) -> None:
    """Figure 8: train loss (noisy fine-tuning set, after training) and test loss, rows = datasets,
    columns = eta, annotated; mean over the seeds present."""
    if real_runs.empty:
        raise ValueError("no real-data runs")
    runs = real_runs.assign(eta=real_runs["eta"].round(4))
    for dataset, group in runs.groupby("dataset"):
        if group["n"].nunique() != 1:
            raise ValueError(f"{dataset}: eta-heatmap runs mix sizes n = {sorted(group['n'].unique())}")
    labels = _dataset_labels(runs)
    datasets = list(labels)
    etas = np.asarray(sorted(runs["eta"].unique()))
    panels = {"train_loss": "train loss (noisy fine-tuning set)", "test_loss": "test loss"}
    grids = [cell_grid(runs, "eta", "dataset", metric, x_values=etas, y_values=datasets) for metric in panels]
    fig, axes = plt.subplots(2, 1, figsize=(max(8.0, 0.55 * len(etas) + 3), 2 * (0.55 * len(datasets) + 1.4)),
                             layout="constrained")
    x_edges, y_edges = np.arange(len(etas) + 1) - 0.5, np.arange(len(datasets) + 1) - 0.5
    for ax, grid, label in zip(axes, grids, panels.values()):
        mesh = _grid_panel(ax, x_edges, y_edges, grid, label)
        for (i, j), value in np.ndenumerate(grid.values.filled(np.nan)):
            if np.isfinite(value):
                shade = mesh.norm(value)
                ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=6,
                        color="black" if shade > 0.6 else "white")
        ax.set_xticks(range(len(etas)), [f"{e:.2f}" for e in etas], rotation=90)
        ax.set_yticks(range(len(datasets)), [labels[d] for d in datasets], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel(r"label-noise rate $\eta$")
        ax.set_title(label)
    handles = _diverged_handle(grids)
    if handles:
        _figure_legend(fig, handles, ncols=1)
    fig.suptitle("Real data: loss after fine-tuning the final layer's query and key")
    note = (
        f"n = {', '.join(str(int(v)) for v in sorted(runs['n'].unique()))} fine-tuning samples, "
        f"mean over {_seeds_note(runs)}; rows say which dataset and backbone were used"
    )
    _save(fig, stem, note)


@plt.rc_context(STYLE)
def real_attention_dynamics(real_attention: pd.DataFrame, real_runs: pd.DataFrame, stem: PathLike) -> None:
    """Figure 9: mean max final-layer attention from position 0 vs epoch, one panel per dataset,
    one line per (n, eta) (colour = n, line style = eta), mean over seeds with status ok."""
    ok, n_excluded = _ok_runs(real_runs)
    trace = real_attention[real_attention["run_id"].isin(ok["run_id"])]
    _require_finite(trace, ["max_attention"], "real-data attention")
    trace = trace.assign(eta=trace["eta"].round(4))
    labels = {k: v.replace("\n", " ") for k, v in _dataset_labels(real_runs).items() if k in set(trace["dataset"])}
    ns = sorted(trace["n"].unique())
    etas = sorted(trace["eta"].unique())
    colours = dict(zip(ns, plt.get_cmap("viridis")(np.linspace(0.0, 0.85, len(ns)))))
    styles = dict(zip(etas, ["-", "--", ":", "-."] * (len(etas) // 4 + 1)))
    ncols = min(3, max(1, len(labels)))
    nrows = -(-len(labels) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.6 * ncols, 2.8 * nrows), squeeze=False, sharey=True,
                             layout="constrained")
    for ax, (dataset, label) in zip(axes.flat, labels.items()):
        mean = trace[trace["dataset"] == dataset].groupby(["n", "eta", "epoch"])["max_attention"].mean()
        for (n, eta), line in mean.groupby(level=["n", "eta"]):
            ax.plot(line.index.get_level_values("epoch"), line.to_numpy(), color=colours[n], ls=styles[eta], lw=1.2)
        ax.set_title(textwrap.fill(label, 48), fontsize=8)
        ax.set_xlabel("epoch")
    for ax in axes[:, 0]:
        ax.set_ylabel("mean max attention\nfrom position 0")
    for ax in axes.flat[len(labels):]:
        ax.set_visible(False)
    handles = [Line2D([], [], color=colours[n], lw=2, label=f"n = {n}") for n in ns]
    handles += [Line2D([], [], color="0.3", ls=styles[e], label=f"$\\eta$ = {e:g}") for e in etas]
    _figure_legend(fig, handles, ncols=len(handles))
    fig.suptitle("Real data: final-layer attention concentration during fine-tuning")
    note = f"mean over {_seeds_note(ok)} and over samples and heads" + _excluded_note(n_excluded)
    _save(fig, stem, note)
