"""Training dynamics of the synthetic models: softmax over tokens (Figures 3 and 6) and delayed
generalization."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patheffects import withStroke

from benign.analysis import metrics
from benign.analysis.theory import REGIME_LABELS
from benign.figures.style import (
    IRRELEVANT_STYLE,
    STYLE,
    TOKEN_STYLES,
    PathLike,
    excluded_note,
    figure_legend,
    ok_runs,
    panel_grid,
    require_finite,
    save,
    seeds_note,
    settings_note,
)
from benign.synthetic import registry, spec

SAMPLE_KINDS = (("clean", False, None), ("noisy, fitted", True, True), ("noisy, not fitted", True, False))

NORM = spec.TEX["signal_norm"]  # ||mu|| as the run spec writes it


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
    settings: Sequence[str] = spec.NAMED_SETTINGS,
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
            _sample_panel(axes[i, j], trace, picked[kind], kind)
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
    note = settings_note(chosen_df, {c: spec.TEX[c] for c in spec.NUMERIC})
    if chosen:
        note += f"; seed {', '.join(str(int(s)) for s in chosen_df['seed'].unique())}"
    if has_cls:
        note += "; attention of [CLS] over the input tokens and itself"
    save(fig, stem, note)


def _sample_panel(ax, trace: pd.DataFrame, sample, kind: str) -> None:
    """One sample's softmax over its tokens against the step, or a word where the run has none of its kind."""
    if sample is None:
        ax.text(0.5, 0.5, f"no {kind} sample", ha="center", va="center", transform=ax.transAxes)
        return
    probs = trace[trace["sample"] == sample].pivot(index="step", columns="token", values="probability")
    for token in probs.columns:
        style = TOKEN_STYLES.get(token, IRRELEVANT_STYLE)
        ax.plot(probs.index, probs[token], **{k: v for k, v in style.items() if k != "label"},
                zorder=3 if token in TOKEN_STYLES else 2)  # fmt: skip
    ax.text(0.98, 0.95, f"{kind} sample #{sample}", ha="right", va="top", transform=ax.transAxes, fontsize=8)


# the delayed-generalization figure's curves: {column: (label, colour, line style)}, top and bottom panel
DELAYED_LINES = {
    "train_acc": ("train accuracy (all, noisy labels)", "tab:blue", "-"),
    "train_acc_clean": ("train accuracy, clean samples", "tab:green", "-"),
    "train_acc_noisy": ("flipped labels fitted", "tab:red", "-"),
    "test_acc": ("test accuracy", "black", "-"),
    "test_sel_relevant": ("test: relevant token most attended", "tab:purple", "--"),
    "test_loss_normalised": ("test: normalised loss r", "tab:brown", "--"),
}
DELAYED_LOSSES = {
    "train_loss": ("train loss (noisy labels)", "tab:blue", "-"),
    "test_loss": ("test loss", "black", "-"),
}


@plt.rc_context(STYLE)
def delayed_generalization(
    runs: pd.DataFrame,
    curves: pd.DataFrame,
    stem: PathLike,
    setting: str = "delayed",
    model: str = "token",
    *,
    loss_threshold: float,
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
    lines, losses = DELAYED_LINES, DELAYED_LOSSES
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
    _milestone_lines(ax, lx, stats, loss_threshold)
    ax.set_xscale("log")
    ax.set_ylabel("accuracy, selection")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=7, loc="center right", framealpha=0.9)
    if model in registry.MODELS and registry.MODELS[model].fixed_head:
        floor = metrics.TOKEN_LOSS_FLOOR
        lx.axhline(floor, color="0.4", ls="--", lw=1.0, label=f"loss floor log(1+e^(-1/√2)) = {floor:.3f}")
    _milestone_text(lx, milestones)
    lx.set_xlabel("gradient step (log scale)")
    lx.set_ylabel("logistic loss")
    lx.legend(fontsize=7, loc="upper right", framealpha=0.9)
    row = ok.iloc[0]
    ax.set_title(f"Delayed generalization, {registry.label(model)}: d = {row['d']}, {NORM} = {row['signal_norm']:g}")
    note = (
        f"mean over {seeds_note(ok)}, band = min to max; "
        + settings_note(ok, {c: spec.TEX[c] for c in spec.NUMERIC})
        + excluded_note(n_excluded)
    )
    save(fig, stem, note)


def _milestone_lines(ax, lx, stats: pd.DataFrame, loss_threshold: float) -> None:
    """Vertical lines at the steps where the mean training accuracy first reaches 1 and the mean
    r first falls to ``loss_threshold``, annotated on the top panel ``ax``."""
    for metric, level, text in (
        ("train_acc", 1.0, "training set fitted"),
        ("test_loss_normalised", loss_threshold, f"attention selects: r ≤ {loss_threshold:g}"),
    ):
        values = stats[(metric, "mean")]
        step = metrics.first_step(-values if metric == "test_loss_normalised" else values,
                                  -level if metric == "test_loss_normalised" else level)  # fmt: skip
        if step is not None:
            for target_ax in (ax, lx):
                target_ax.axvline(step, color=DELAYED_LINES[metric][1], ls=":", lw=1.0)
            ax.annotate(
                f"{text}\n(step {step})",
                (step, 0.02),
                xycoords=("data", "axes fraction"),
                rotation=90,
                ha="right",
                va="bottom",
                fontsize=7,
                color=DELAYED_LINES[metric][1],
            )


def _milestone_text(lx, m: dict) -> None:
    """The loss panel's note: the test loss when the training set is fitted and at the end."""
    if m["fit_step"] is not None:
        text = (f"test loss {m['test_loss_fit']:.3f} when the training set is fitted (step {m['fit_step']}),\n"
                f"{m['test_loss_last']:.3f} at step {m['last_step']}; test accuracy {m['test_acc_first']:.3f} "
                f"at step {m['first_step']}, {m['test_acc_last']:.3f} at the end")  # fmt: skip
    else:
        text = f"training set not fitted by step {m['last_step']}; test loss {m['test_loss_last']:.3f} at the end"
    lx.text(0.02, 0.1, text, transform=lx.transAxes, fontsize=7, va="bottom",
            path_effects=[withStroke(linewidth=3, foreground="white")])  # fmt: skip
