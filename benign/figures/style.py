"""The figures' shared look (rc style, DPI, colours, symbols) and drawing helpers: the
settings footnote, atomic saving, the diverged-cell heatmap panel and figure legends.
Importing this module selects the non-interactive Agg backend.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from benign.analysis.metrics import Grid  # noqa: E402
from benign.core.io import atomic_path  # noqa: E402

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
PathLike = str | os.PathLike

# Token styles of the softmax-dynamics figures (0-based token indices of benign.synthetic.data_model).
TOKEN_STYLES = {
    0: {"color": "tab:blue", "lw": 2.0, "label": "token 0: relevant"},
    1: {"color": "tab:green", "lw": 1.5, "label": "token 1: weakly relevant"},
    2: {"color": "tab:red", "lw": 1.5, "label": "token 2: weakly relevant, opposite class"},
    -1: {"color": "black", "lw": 1.0, "ls": "--", "label": "[CLS] itself"},
}
IRRELEVANT_STYLE = {"color": "0.65", "lw": 0.8, "label": "tokens 3..T-1: irrelevant"}


def save(fig: plt.Figure, stem: PathLike, note: str) -> None:
    """Add the settings footnote below everything drawn (wrapped to the figure's width), then write <stem>.png and <stem>.pdf atomically."""
    fig.draw_without_rendering()
    fig.set_layout_engine("none")  # freeze the layout, and pin the figure legends where it put them,
    for legend in fig.legends:  # else the tight crop below re-anchors them onto the footnote
        box = legend.get_window_extent().transformed(fig.transFigure.inverted())
        legend.set_bbox_to_anchor(box, transform=fig.transFigure)
    bottom = fig.get_tightbbox().y0 / fig.get_figheight()
    wrapped = textwrap.fill(
        note, width=max(int(fig.get_figwidth() * 72 / 3.6), 60)
    )  # 7-point type, about 3.6 pt a character
    fig.text(0.5, bottom - 0.005, wrapped, ha="center", va="top", fontsize=7, color="0.3")
    for ext in ("png", "pdf"):
        with atomic_path(Path(f"{os.fspath(stem)}.{ext}")) as tmp:
            metadata = {"CreationDate": None} if ext == "pdf" else None
            fig.savefig(tmp, format=ext, dpi=DPI, bbox_inches="tight", metadata=metadata)
    plt.close(fig)


def settings_note(runs: pd.DataFrame, symbols: dict[str, str]) -> str:
    """'n = 20, T = 8, ...' for the run parameters ``symbols`` ({column: how it is written}; for
    the synthetic runs benign.synthetic.spec.TEX of every numeric one but the seed) that take one
    value across ``runs``."""
    parts = []
    for col, symbol in symbols.items():
        values = runs[col].dropna().unique()
        if len(values) == 1:
            parts.append(f"{symbol} = {values[0]:g}")
    return ", ".join(parts)


def seeds_note(runs: pd.DataFrame) -> str:
    """'3 seeds (1, 2, 3)': which seeds a figure averages over."""
    seeds = sorted(int(s) for s in runs["seed"].unique())
    return f"{len(seeds)} seed{'s' if len(seeds) != 1 else ''} ({', '.join(map(str, seeds))})"


def ok_runs(runs: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Runs with status "ok", and how many others were left out."""
    ok = runs["status"] == "ok"
    return runs[ok], int((~ok).sum())


def excluded_note(n_excluded: int) -> str:
    """Footnote suffix saying how many runs were left out, so that none drop silently."""
    return f"; {n_excluded} run(s) left out (status not ok)" if n_excluded else ""


def require_finite(df: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    """Refuse to draw non-finite values that belong to runs marked ok."""
    values = df[list(columns)].to_numpy(dtype=float)
    if not np.isfinite(values).all():
        raise ValueError(f"{what}: non-finite values in runs whose status is ok")


def figure_legend(fig: plt.Figure, handles: list, ncols: int) -> None:
    """One legend for the whole figure, below the panels."""
    fig.legend(handles=handles, loc="outside lower center", ncols=ncols, frameon=False)


def edges(values: np.ndarray) -> np.ndarray:
    """Cell edges around sorted cell centres."""
    v = np.asarray(values, dtype=float)
    if v.size == 1:
        return np.array([v[0] - 0.5, v[0] + 0.5])
    mid = (v[1:] + v[:-1]) / 2
    return np.concatenate([[2 * v[0] - mid[0]], mid, [2 * v[-1] - mid[-1]]])


def grid_panel(ax, x_edges, y_edges, grid: Grid, label: str):
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
            x_edges,
            y_edges,
            np.ma.masked_array(np.ones(grid.diverged.shape), mask=~grid.diverged),
            cmap=ListedColormap([DIVERGED_COLOUR]),
            shading="flat",
        )
    if constant:
        ax.text(0.5, 0.5, f"{label}: {values[0]:.4g}\nin every cell", transform=ax.transAxes, ha="center", va="center",
                fontsize=9, bbox={"facecolor": "white", "alpha": 0.85, "edgecolor": "0.5"})  # fmt: skip
    else:
        ax.figure.colorbar(mesh, ax=ax, label=label, shrink=0.9)
    return mesh


def diverged_handle(grids: Sequence[Grid]) -> list:
    """A legend entry for the diverged colour, with the most diverged cells of any panel; none if there are none."""
    cells = max(int(g.diverged.sum()) for g in grids)
    return (
        [Patch(facecolor=DIVERGED_COLOUR, label=f"diverged / non-finite ({cells} cell{'s' if cells > 1 else ''})")]
        if cells
        else []
    )


def panel_grid(rows: int, cols: int, width: float, height: float):
    """(figure, axes[rows, cols]) of panels sharing both axes, each ``width`` wide, the figure
    ``height`` tall."""
    return plt.subplots(
        rows, cols, figsize=(width * cols, height), sharex=True, sharey=True, squeeze=False, layout="constrained"
    )


# the colour of each regime, shared by the heatmaps and the regime atlas
REGIME_COLOURS = {"not_overfitting": np.array([0.12, 0.47, 0.71]), "benign": np.array([0.17, 0.63, 0.17]),
                  "harmful": np.array([0.84, 0.15, 0.16])}  # fmt: skip
