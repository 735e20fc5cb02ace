"""The large-step regime of the paper's fixed learning rate (docs/regimes.md#the-one-step-regime):
what one gradient step already fits, over (d, ||mu||), one panel per n."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from benign.analysis.one_step import one_step_cells
from benign.analysis.theory import Criteria, in_sweeps
from benign.figures.style import STYLE, PathLike, figure_legend, save, seeds_note
from benign.synthetic import spec

PAPER_D = 5000  # the paper's heatmaps run d from 250 to 5000 at this lr

NORM = spec.TEX["signal_norm"]  # ||mu|| as the run spec writes it


@plt.rc_context(STYLE)
def one_step_regime(runs: pd.DataFrame, curves: pd.DataFrame, sweep: str, criteria: Criteria | dict,
                    stem: PathLike) -> None:  # fmt: skip
    """Per n: the mean share of flipped labels the first step at the paper's lr fits, per (d,
    ||mu||) cell; the cells where it fits them (not so fitted at initialisation) on at least half
    of the seeds ringed; the paper's
    heatmap range of d shaded; the line SNR = 1 / sqrt(n) (Magen et al.'s scale)."""
    cells = one_step_cells(runs, curves, sweep, criteria)
    ns = sorted(cells["n"].unique())
    fig, axes = plt.subplots(1, len(ns), figsize=(3.4 * len(ns), 3.2), squeeze=False, sharey=True,
                             layout="constrained")  # fmt: skip
    for ax, n in zip(axes[0], ns):
        at = cells[cells["n"] == n]
        points = ax.scatter(at["d"], at["signal_norm"], c=at["fitted"], cmap="magma_r", vmin=0, vmax=1, marker="s",
                            s=30, edgecolors="none")  # fmt: skip
        fits = at[at["share"] >= 0.5]
        ax.scatter(fits["d"], fits["signal_norm"], facecolors="none", edgecolors="tab:cyan", marker="s", s=46, lw=0.9)
        ax.axvspan(at["d"].min() / 1.5, PAPER_D, color="0.85", zorder=0)
        d = np.geomspace(at["d"].min(), at["d"].max(), 50)
        ax.plot(d, np.sqrt(d / n), color="tab:green", lw=1.2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylim(at["signal_norm"].min() / 1.5, at["signal_norm"].max() * 1.5)
        ax.set_title(f"n = {n:g}", fontsize=9)
        ax.set_xlabel("token dimension d")
    axes[0, 0].set_ylabel(f"signal norm {NORM}")
    fig.colorbar(points, ax=axes[0, -1], label="flipped labels fitted by step 1")
    handles = [Line2D([], [], color="tab:green", lw=1.2, label="SNR = 1 / sqrt(n)"),
               Line2D([], [], color="tab:cyan", marker="s", mfc="none", ls="none", label="fitted on >= half the seeds"),
               Line2D([], [], color="0.85", lw=6, label="the paper's heatmap range of d")]  # fmt: skip
    figure_legend(fig, handles, ncols=3)
    lr = cells["lr"].iloc[0] if len(cells) else float("nan")
    note = (f"one gradient step at lr {lr:g} from p = 0; colour: mean over {seeds_note(runs[in_sweeps(runs, [sweep])])} "
            "of the share of flipped labels fitted; the step size lr sigma^2 d grows with d: past the ringed cells a "
            "run is a one-step jump; results/tables/one_step_regime")  # fmt: skip
    save(fig, stem, note)
