"""Figures of the synthetic experiments: the token projection (Figure 1), softmax dynamics
(Figures 3 and 6), loss heatmaps (Figures 5 and 7) and delayed generalization."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patheffects import withStroke

from benign.analysis import metrics
from benign.analysis.theory import REGIME_LABELS
from benign.core import registry
from benign.figures.style import (
    IRRELEVANT_STYLE,
    NORM,
    STYLE,
    TOKEN_STYLES,
    PathLike,
    diverged_handle,
    edges,
    excluded_note,
    figure_legend,
    grid_panel,
    ok_runs,
    panel_grid,
    require_finite,
    save,
    seeds_note,
    settings_note,
)
from benign.synthetic.data_model import DataSpec
from benign.synthetic.token_projection import projection_accuracy, projection_config
from benign.tables.boundaries import BOUNDARIES

REGIME_COLOURS = {"not_overfitting": np.array([0.12, 0.47, 0.71]), "benign": np.array([0.17, 0.63, 0.17]),
                  "harmful": np.array([0.84, 0.15, 0.16])}  # fmt: skip

# ---------------------------------------------------------------- Figure 1


@plt.rc_context(STYLE)
def token_projection(points: pd.DataFrame, cfg: DataSpec | Mapping, stem: PathLike) -> None:
    """Figure 1: the token each input selects, projected on (mu_{-1}, mu_{+1}); train top, test bottom.

    ``points`` is ``benign.synthetic.token_projection.token_projection(cfg, lambdas)``; ``cfg`` its
    data set, or the workflow's ``synthetic.projection`` block.
    """
    if isinstance(cfg, Mapping):
        cfg, _ = projection_config(cfg)
    accuracy = projection_accuracy(points).set_index("setting")
    settings = list(accuracy.index)
    fig, axes = panel_grid(2, len(settings), 3.2, 6.4)
    colours = {1: "tab:blue", -1: "tab:orange"}
    for j, setting in enumerate(settings):
        lam = accuracy.loc[setting, "lam"]
        for i, split in enumerate(("train", "test")):
            ax = axes[i, j]
            sub = points[(points["setting"] == setting) & (points["split"] == split)]
            for label, colour in colours.items():
                for noisy, marker, size in ((False, "o", 14), (True, "X", 40)):
                    pts = sub[(sub["label_true"] == label) & (sub["noisy"] == noisy)]
                    ax.scatter(
                        pts["proj_neg"],
                        pts["proj_pos"],
                        c=colour,
                        marker=marker,
                        s=size,
                        edgecolors="black" if noisy else "none",
                        linewidths=0.5,
                        alpha=0.8,
                    )
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
    figure_legend(fig, handles, ncols=4)
    note = (
        f"n = {cfg.n} train / {cfg.n_test} test, T = {cfg.T}, d = {cfg.d}, {NORM} = {cfg.signal_norm:g}, "
        f"$\\rho$ = {cfg.rho:g}, $\\eta$ = {cfg.eta:g}, $\\sigma$ = {cfg.sigma:g}, seed {cfg.seed}; "
        r"p = $\mu_{+1} + \mu_{-1} + \lambda \sum_i \varepsilon_i$ (noise of token 2 for flipped samples, token 0 otherwise); "
        "train accuracy against the flipped labels"
    )
    save(fig, stem, note)


# ---------------------------------------------------------------- softmax dynamics


# (label, noisy, fitted at the last logged step; None: either)
SAMPLE_KINDS = (("clean", False, None), ("noisy, fitted", True, True), ("noisy, not fitted", True, False))


def _run_with_every_kind(candidates: pd.DataFrame, attention: pd.DataFrame):
    """(run, its trace, its picked samples): the lowest-seed run that has a sample of every kind
    of SAMPLE_KINDS, else the lowest-seed run."""
    first = None
    for _, run in candidates.iterrows():
        trace = attention[attention["run_id"] == run["run_id"]]
        require_finite(trace, ["probability"], f"attention of run {run['run_id']}")
        picked = pick_samples(trace)
        if all(s is not None for s in picked.values()):
            return run, trace, picked
        first = first or (run, trace, picked)
    return first


def pick_samples(trace: pd.DataFrame) -> dict[str, int | None]:
    """The lowest-index training sample of each of SAMPLE_KINDS in one run's attention trace,
    judged at its last logged step (None where the run has no such sample)."""
    last = trace[trace["step"] == trace["step"].max()]
    out = {}
    for kind, noisy, fitted in SAMPLE_KINDS:
        pick = last["noisy"] == noisy
        if fitted is not None:
            pick &= last["fitted"].fillna(False).astype(bool) == fitted
        samples = last.loc[pick, "sample"]
        out[kind] = int(samples.min()) if len(samples) else None
    return out


@plt.rc_context(STYLE)
def softmax_dynamics(
    runs: pd.DataFrame,
    attention: pd.DataFrame,
    stem: PathLike,
    model: str = "token",
    settings: Sequence[str] = ("benign", "harmful", "not_overfitting"),
) -> None:
    """Figures 3 and 6: per-token softmax vs step for a clean training sample, a noisy one
    fitted by the last step, and a noisy one not fitted by then (the paper's figure shows both
    kinds where a run has both).

    One column per named setting (``runs.setting``) of ``model``; each uses its lowest-seed
    run with status ok, and the lowest-index sample of each kind in that run.
    """
    runs = runs[(runs["model"] == model) & runs["setting"].isin(settings)]
    attention = attention[attention["run_id"].isin(runs["run_id"])]
    has_cls = bool((attention["token"] == -1).any())
    fig, axes = panel_grid(len(SAMPLE_KINDS), len(settings), 3.4, 8.0)
    chosen = []
    for j, setting in enumerate(settings):
        candidates, _ = ok_runs(runs[runs["setting"] == setting])
        axes[0, j].set_title(REGIME_LABELS.get(setting, setting))
        if candidates.empty:
            for ax in axes[:, j]:
                ax.text(0.5, 0.5, "no run with status ok", ha="center", va="center", transform=ax.transAxes)
            continue
        run, trace, picked = _run_with_every_kind(candidates.sort_values("seed"), attention)
        chosen.append(run)
        axes[0, j].set_title(
            f"{REGIME_LABELS.get(setting, setting)}\nd = {run['d']}, {NORM} = {run['signal_norm']:g} "
            f"(SNR = {run['snr']:.3f}), seed {run['seed']}"
        )
        for i, (kind, _, _) in enumerate(SAMPLE_KINDS):
            ax = axes[i, j]
            sample = picked[kind]
            if sample is None:
                ax.text(0.5, 0.5, f"no {kind} sample", ha="center", va="center", transform=ax.transAxes)
                continue
            probs = trace[trace["sample"] == sample].pivot(index="step", columns="token", values="probability")
            for token in probs.columns:
                style = TOKEN_STYLES.get(token, IRRELEVANT_STYLE)
                ax.plot(
                    probs.index,
                    probs[token],
                    **{k: v for k, v in style.items() if k != "label"},
                    zorder=3 if token in TOKEN_STYLES else 2,
                )
            ax.text(0.98, 0.95, f"{kind} sample #{sample}", ha="right", va="top", transform=ax.transAxes, fontsize=8)
    for ax in axes[-1]:
        ax.set_xlabel("gradient step")
    for i, (kind, _, _) in enumerate(SAMPLE_KINDS):
        axes[i, 0].set_ylabel(f"{kind} sample\nsoftmax probability")
    axes[0, 0].set_ylim(-0.02, 1.02)
    handles = [Line2D([], [], **s) for t, s in TOKEN_STYLES.items() if t >= 0 or has_cls] + [
        Line2D([], [], **IRRELEVANT_STYLE)
    ]
    figure_legend(fig, handles, ncols=len(handles))
    fig.suptitle(f"Softmax over tokens during training, {registry.label(model)}")
    chosen_df = pd.DataFrame(chosen) if chosen else runs
    note = settings_note(chosen_df)
    if chosen:
        note += f"; seed {', '.join(str(int(s)) for s in chosen_df['seed'].unique())}"
    if has_cls:
        note += "; attention of [CLS] over the input tokens and itself"
    save(fig, stem, note)


# ---------------------------------------------------------------- loss heatmaps


@plt.rc_context(STYLE)
def loss_heatmap(
    runs: pd.DataFrame,
    stem: PathLike,
    fits: pd.DataFrame | None = None,
    c1: float | None = None,
    c2: float | None = None,
    setting: str = "heatmap",
    model: str = "token",
) -> None:
    """Figures 5 and 7: final train/test loss and accuracy over (d, ||mu||), mean over seeds,
    with the regime boundaries overlaid: the fitted ||mu||* = c d^a n^b of the regime-boundaries
    table ``fits`` at the runs' horizon (solid), and the theory's curves ||mu|| = c1 sqrt(d/n)
    and c2 d^{1/4} (dashed) with the constants fitted there, or with ``c1`` and ``c2`` where
    given (pinned in config). Without fits or pins no curve is drawn: the constants are the
    theorem's unknowns."""
    runs = runs[(runs["model"] == model) & (runs["setting"] == setting)]
    if runs.empty:
        raise ValueError(f"no runs of model {model!r} with setting {setting!r}")
    ns = runs["n"].unique()
    if len(ns) != 1:
        raise ValueError(f"heatmap runs mix training-set sizes {sorted(ns)}; the boundary needs one n")
    n, horizon = int(ns[0]), int(runs["steps"].max())
    curves = _heatmap_curves(fits, horizon, c1, c2)
    panels = {
        "train_loss": "final train loss",
        "test_loss": "final test loss",
        "train_acc": "final train accuracy (noisy labels)",
        "test_acc": "final test accuracy",
    }
    fig, axes = plt.subplots(2, 2, figsize=(10, 8.4), sharex=True, sharey=True, layout="constrained")
    grids = [metrics.cell_grid(runs, "d", "signal_norm", metric) for metric in panels]
    x_edges, y_edges = edges(grids[0].x), edges(grids[0].y)
    d_line = np.linspace(x_edges[0], x_edges[-1], 200)
    outline = [withStroke(linewidth=3.2, foreground="black")]
    for ax, grid, label in zip(axes.flat, grids, panels.values()):
        grid_panel(ax, x_edges, y_edges, grid, label)
        for curve in curves:
            y = curve["c"] * d_line ** curve["a"] * n ** curve["b"]
            ax.plot(d_line, y, color=curve["colour"], lw=1.8, ls=curve["ls"], path_effects=outline)
        ax.set_ylim(y_edges[0], y_edges[-1])
        ax.set_xlim(x_edges[0], x_edges[-1])
        ax.set_title(label)
    for ax in axes[-1]:
        ax.set_xlabel("token dimension d")
    for ax in axes[:, 0]:
        ax.set_ylabel(f"signal norm {NORM}")
    handles = [Line2D([], [], color=c["colour"], lw=1.8, ls=c["ls"], label=c["label"]) for c in curves]
    handles += diverged_handle(grids)
    if handles:
        figure_legend(fig, handles, ncols=2)
    fig.suptitle(f"Final metrics over (d, {NORM}), {registry.label(model)}")
    note = (
        f"{len(grids[0].x)} x {len(grids[0].y)} grid, mean over {seeds_note(runs)} per cell; "
        + settings_note(runs)
        + "; a cell with any diverged or non-finite run is masked"
        + ("; curves: fitted at this horizon, results/tables/regime_boundaries" if fits is not None else "")
        + ("" if curves else "; no boundary curves (no fit at this horizon, no constants pinned)")
    )
    save(fig, stem, note)


def _heatmap_curves(fits: pd.DataFrame | None, horizon: int, c1: float | None, c2: float | None) -> list[dict]:
    """The boundary curves of a heatmap at ``horizon``: per boundary, the fitted power law and
    the theory's exponents with the fitted (or pinned) constant, as {c, a, b, colour, ls, label}."""
    rows = fits[fits["horizon"] == horizon] if fits is not None else None
    out = []
    pins = {"not overfitting": (c1, "c_1", "above: not overfitting", "not_overfitting", r"$c_1\sqrt{d/n}$"),
            "selection (harmful below)": (c2, "c_2", "below: harmful", "harmful", r"$c_2 d^{1/4}$")}  # fmt: skip
    for boundary, _, _, a, b in BOUNDARIES:
        pinned, const, side, regime, theory = pins[boundary]
        colour = REGIME_COLOURS[regime]
        row = rows[rows["boundary"] == boundary] if rows is not None else ()
        row = row.iloc[0] if len(row) else None
        if row is not None and np.isfinite(row["a"]):  # a boundary fitted along d (else its d-dependence is unknown)
            fb = row["b"] if np.isfinite(row["b"]) else 0.0
            label = f"fitted {boundary}: {row['c']:.3g} $d^{{{row['a']:.2f}}} n^{{{fb:.2f}}}$ ({side})"
            out.append(dict(c=row["c"], a=row["a"], b=fb, colour=colour, ls="-", label=label))
        if pinned is not None:
            out.append(
                dict(c=pinned, a=a, b=b, colour=colour, ls="--", label=f"{theory}, ${const}$ = {pinned:g} (pinned)")
            )
        elif row is not None and np.isfinite(row["c_theory"]):
            label = f"{theory}, ${const}$ = {row['c_theory']:.3g} (fitted)"
            out.append(dict(c=row["c_theory"], a=a, b=b, colour=colour, ls="--", label=label))
    return out


# ---------------------------------------------------------------- delayed generalization


@plt.rc_context(STYLE)
def delayed_generalization(
    runs: pd.DataFrame,
    curves: pd.DataFrame,
    stem: PathLike,
    setting: str = "delayed",
    model: str = "token",
    loss_threshold: float = 0.5,
) -> None:
    """Delayed generalization (the paper's Section 4 claim), two panels over gradient steps (log x axis), mean over seeds with a min-max band.
    Top: train accuracy (all, clean, flipped labels fitted), test accuracy, and what attention
    selects at test time (the fraction of test samples whose most-attended token is the relevant
    one, and the normalised test loss r: 1 uniform attention, 0 selection), with the steps at which
    the training set is first fitted and r first falls to ``loss_threshold``.
    Bottom: train and test loss, with the token model's loss floor: in this model the fixed head
    classifies the uniform-attention mean token well from step 0, so what generalization adds
    after the fit shows in the test loss (the margin), which the panel quantifies."""
    selected = runs[(runs["model"] == model) & (runs["setting"] == setting)]
    ok, n_excluded = ok_runs(selected)
    if ok.empty:
        raise ValueError(f"no run with status ok for model {model!r}, setting {setting!r}")
    lines = {
        "train_acc": ("train accuracy (all, noisy labels)", "tab:blue", "-"),
        "train_acc_clean": ("train accuracy, clean samples", "tab:green", "-"),
        "train_acc_noisy": ("flipped labels fitted", "tab:red", "-"),
        "test_acc": ("test accuracy", "black", "-"),
        "test_sel_relevant": ("test: relevant token most attended", "tab:purple", "--"),
        "test_loss_normalised": ("test: normalised loss r", "tab:brown", "--"),
    }
    losses = {"train_loss": ("train loss (noisy labels)", "tab:blue", "-"), "test_loss": ("test loss", "black", "-")}
    c = curves[curves["run_id"].isin(ok["run_id"]) & (curves["step"] > 0)]
    require_finite(c, list(lines) + list(losses), "delayed-generalization curves")
    stats = metrics.step_band(c, list(lines) + list(losses))
    milestones = metrics.delayed_milestones(c)
    fig, (ax, lx) = plt.subplots(2, 1, figsize=(6.4, 6.6), sharex=True, layout="constrained", height_ratios=[1.1, 1])
    for target_ax, group in ((ax, lines), (lx, losses)):
        for metric, (label, colour, ls) in group.items():
            target_ax.plot(stats.index, stats[(metric, "mean")], color=colour, ls=ls, lw=1.6, label=label)
            target_ax.fill_between(
                stats.index, stats[(metric, "min")], stats[(metric, "max")], color=colour, alpha=0.15, lw=0
            )
    for metric, level, text in (
        ("train_acc", 1.0, "training set fitted"),
        ("test_loss_normalised", loss_threshold, f"attention selects: r ≤ {loss_threshold:g}"),
    ):
        values = stats[(metric, "mean")]
        step = metrics.first_step(-values if metric == "test_loss_normalised" else values,
                                  -level if metric == "test_loss_normalised" else level)  # fmt: skip
        if step is not None:
            for target_ax in (ax, lx):
                target_ax.axvline(step, color=lines[metric][1], ls=":", lw=1.0)
            ax.annotate(
                f"{text}\n(step {step})",
                (step, 0.02),
                xycoords=("data", "axes fraction"),
                rotation=90,
                ha="right",
                va="bottom",
                fontsize=7,
                color=lines[metric][1],
            )
    ax.set_xscale("log")
    ax.set_ylabel("accuracy, selection")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=7, loc="center right", framealpha=0.9)
    if model in registry.MODELS and registry.MODELS[model].fixed_head:
        floor = metrics.TOKEN_LOSS_FLOOR
        lx.axhline(floor, color="0.4", ls="--", lw=1.0, label=f"loss floor log(1+e^(-1/√2)) = {floor:.3f}")
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
    ax.set_title(f"Delayed generalization, {registry.label(model)}: d = {row['d']}, {NORM} = {row['signal_norm']:g}")
    note = f"mean over {seeds_note(ok)}, band = min to max; " + settings_note(ok) + excluded_note(n_excluded)
    save(fig, stem, note)
