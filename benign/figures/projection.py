"""Figure 1: the token each input selects under a hand-set query, projected on the class signals."""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.lines import Line2D

from benign.analysis.theory import REGIME_LABELS
from benign.core import notation
from benign.figures.style import (
    STYLE,
    PathLike,
    figure_legend,
    panel_grid,
    save,
)
from benign.synthetic import spec
from benign.synthetic.spec import DataSpec

NORM = spec.TEX["signal_norm"]  # ||mu|| as the run spec writes it


@plt.rc_context(STYLE)
def token_projection(points: pd.DataFrame, cfg: DataSpec | Mapping, stem: PathLike) -> None:
    """Figure 1: the token each input selects, projected on (mu_{-1}, mu_{+1}); train top, test bottom.

    ``points`` is ``benign.synthetic.token_projection.token_projection(cfg, lambdas)``; ``cfg`` its
    data set, or the workflow's ``synthetic.projection`` block.
    """
    # here, not at the top: the module draws the projection with torch, and the artifact table
    # imports this figure at the workflow's parse time, which stays torch-free
    from benign.synthetic.token_projection import projection_accuracy, projection_config

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
            head = f"{REGIME_LABELS.get(setting, setting)} ({notation.TEX['lambda']} = {lam:g})\n" if i == 0 else ""
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
        f"{spec.TEX['rho']} = {cfg.rho:g}, {spec.TEX['eta']} = {cfg.eta:g}, {spec.TEX['sigma']} = {cfg.sigma:g}, seed {cfg.seed}; "
        r"p = $\mu_{+1} + \mu_{-1} + \lambda \sum_i \varepsilon_i$ (noise of token 2 for flipped samples, token 0 otherwise); "
        "train accuracy against the flipped labels"
    )
    save(fig, stem, note)


# (label, noisy, fitted at the last logged step; None: either)
