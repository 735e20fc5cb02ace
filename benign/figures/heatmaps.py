"""Final metrics over (d, ||mu||) per model: the loss heatmaps (Figures 5 and 7), with the fitted
boundaries."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patheffects import withStroke

from benign.analysis import metrics
from benign.analysis.boundaries import BOUNDARIES
from benign.figures.style import (
    REGIME_COLOURS,
    STYLE,
    PathLike,
    diverged_handle,
    edges,
    figure_legend,
    grid_panel,
    save,
    seeds_note,
    settings_note,
)
from benign.synthetic import registry, spec

NORM = spec.TEX["signal_norm"]  # ||mu|| as the run spec writes it


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
        + settings_note(runs, {c: spec.TEX[c] for c in spec.NUMERIC})
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
    for boundary, _, _, a, b, _ in BOUNDARIES:
        if boundary not in pins:  # the argmax boundary: the heatmaps draw the regimes' two
            continue
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
