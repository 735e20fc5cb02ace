"""The attention-SVM figure (docs/max_margin.md): the trained direction's cosine with the max-margin
direction of the tokens it selects, against step, and which tokens the samples select."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from benign.figures.style import STYLE, PathLike, require_finite, save, seeds_note, settings_note
from benign.synthetic import spec

SELECTIONS = {  # column: (label, colour)
    "clean_signal": ("clean: relevant token", "tab:blue"),
    "noisy_signal": ("noisy: relevant token", "tab:cyan"),
    "noisy_opposite": ("noisy: opposite-class token", "tab:red"),
    "noisy_noise": ("noisy: a noise token", "0.55"),
}


@plt.rc_context(STYLE)
def max_margin_alignment(frame: pd.DataFrame, stem: PathLike) -> None:
    """Per model, cos(direction, p^mm(a(t))) against step on log x axes, one line per setting
    (mean over seeds, their range shaded); right, the selections at the last step per setting
    of the first (W-fixed) model."""
    if frame.empty:
        raise ValueError("the attention-SVM figure has no runs")
    frame = frame[frame["step"] > 0]
    require_finite(frame, ["cosine"], "the attention-SVM cosines")
    models = list(dict.fromkeys(frame["model"]))
    fig, axes = plt.subplots(1, len(models) + 1, figsize=(4.2 * (len(models) + 1), 3.8), layout="constrained")
    for ax, model in zip(axes, models):
        runs = frame[frame["model"] == model]
        settings = list(dict.fromkeys(runs["setting"]))
        colours = plt.cm.viridis(np.linspace(0, 0.9, len(settings)))
        for setting, colour in zip(settings, colours):
            by_step = runs[runs["setting"] == setting].groupby("step")["cosine"]
            mean, low, high = by_step.mean(), by_step.min(), by_step.max()
            first = runs[runs["setting"] == setting].iloc[0]
            ax.plot(mean.index, mean, color=colour, lw=1.5,
                    label=f"{setting}: d = {first['d']}, {spec.SYMBOLS['signal_norm']} = {first['signal_norm']:g}")  # fmt: skip
            ax.fill_between(mean.index, low, high, color=colour, alpha=0.2, lw=0)
        ax.axhline(1.0, color="0.3", lw=0.8, ls=":")
        ax.set_xscale("log")
        ax.set_xlabel("gradient step")
        ax.set_ylabel(r"cos(direction, $p^{mm}$ of its selection)")
        kind = "W fixed: p" if model != "token" else "W and p trained: W p (exploration)"
        ax.set_title(f"{model} ({kind})")
        ax.legend(fontsize=6.5, loc="best", framealpha=0.8)
    _selections(axes[-1], frame[frame["model"] == models[0]])
    note = (
        f"Tarzanagh et al. (NeurIPS 2023): with W fixed, gradient descent on p converges in direction to the "
        f"attention-SVM solution of the tokens it selects. {seeds_note(frame)}; "
        f"{settings_note(frame, {c: spec.TEX[c] for c in spec.NUMERIC if c != 'n_test'})}"
    )
    save(fig, stem, note)


def _selections(ax, runs: pd.DataFrame) -> None:
    """Grouped bars: at the last step, the fraction of clean and of noisy samples selecting each
    kind of token, per setting (mean over seeds)."""
    last = runs[runs["step"] == runs["step"].max()]
    settings = list(dict.fromkeys(last["setting"]))
    means = last.groupby("setting", sort=False)[list(SELECTIONS)].mean().reindex(settings)
    x = np.arange(len(settings))
    width = 0.8 / len(SELECTIONS)
    for k, (column, (label, colour)) in enumerate(SELECTIONS.items()):
        ax.bar(x + (k - (len(SELECTIONS) - 1) / 2) * width, means[column], width, color=colour, label=label)
    ax.set_xticks(x, settings, rotation=30, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("fraction of samples")
    ax.set_title(f"{runs['model'].iloc[0]}: selected token at step {int(last['step'].max())}")
    ax.legend(fontsize=6.5)
