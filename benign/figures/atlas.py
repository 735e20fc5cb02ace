"""Figures of the regime atlas (docs/regimes.md): the regime map over (d, ||mu||) per n and
horizon, the fitted exponents against the horizon, and the fit and generalization times as
survival curves."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from benign.analysis import survival
from benign.analysis.metrics import regime_fractions
from benign.analysis.theory import REGIME_LABELS, REGIMES
from benign.figures.style import NORM, REGIME_COLOURS, STYLE, PathLike, figure_legend, save, seeds_note

BOUNDARY_COLOURS = {
    "not overfitting": REGIME_COLOURS["not_overfitting"],
    "selection (harmful below)": REGIME_COLOURS["harmful"],
}


@plt.rc_context(STYLE)
def regime_map(runs: pd.DataFrame, labels: pd.DataFrame, fits: pd.DataFrame, stem: PathLike) -> None:
    """The regime atlas: one row of panels per horizon, one column per n; each (d, ||mu||) cell's
    colour mixes the regimes' colours by the fraction of seeds in each; lines: the boundaries of
    the regime-boundaries table ``fits`` at that n (solid: fitted, dashed: the theory's exponents
    with their fitted constant). ``runs`` and ``labels``: from benign.analysis.theory.atlas_labels."""
    horizons, ns = sorted(labels["horizon"].unique()), sorted(runs["n"].unique())
    cells = regime_fractions(labels, runs, ["d", "n", "signal_norm"])
    fig, axes = plt.subplots(len(horizons), len(ns), figsize=(3.3 * len(ns), 3.1 * len(horizons)), squeeze=False,
                             sharex=True, sharey=True, layout="constrained")  # fmt: skip
    d_line = np.geomspace(runs["d"].min(), runs["d"].max(), 50)
    for i, horizon in enumerate(horizons):
        for j, n in enumerate(ns):
            ax = axes[i, j]
            at = cells[(cells["horizon"] == horizon) & (cells["n"] == n)]
            colour = sum(np.outer(at[r], REGIME_COLOURS[r]) for r in REGIMES)
            colour = np.clip(colour + np.outer(1 - at[list(REGIMES)].sum(axis=1), [0.8, 0.8, 0.8]), 0, 1)
            ax.scatter(at["d"], at["signal_norm"], c=colour, marker="s", s=28, edgecolors="none")
            if at.empty:  # no run of this n reached the horizon: no fit to draw here
                ax.text(0.5, 0.5, "no run to this horizon", ha="center", va="center", transform=ax.transAxes,
                        fontsize=8, color="0.4")  # fmt: skip
                continue
            for _, row in fits[fits["horizon"] == horizon].iterrows():
                line = BOUNDARY_COLOURS[row["boundary"]]
                if np.isfinite(row["c"]):
                    ax.plot(d_line, row["c"] * d_line ** _or0(row["a"]) * n ** _or0(row["b"]), color=line, lw=1.6)
                if np.isfinite(row.get("c_theory", np.nan)):
                    y = row["c_theory"] * d_line ** row["theory_a"] * n ** row["theory_b"]
                    ax.plot(d_line, y, color=line, lw=1.1, ls="--")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"n = {n:g}, horizon {horizon:,}", fontsize=9)
            if i == len(horizons) - 1:
                ax.set_xlabel("token dimension d")
            if j == 0:
                ax.set_ylabel(f"signal norm {NORM}")
    values = np.sort(runs["d"].unique())
    axes[-1, 0].set_xticks(values, [f"{v:g}" for v in values])
    axes[-1, 0].minorticks_off()
    handles = [Patch(facecolor=c, label=REGIME_LABELS[r]) for r, c in REGIME_COLOURS.items()]
    handles += [Line2D([], [], color="0.3", lw=1.6, label="fitted boundary c d^a n^b"),
                Line2D([], [], color="0.3", lw=1.1, ls="--", label="theory's exponents, fitted constant")]  # fmt: skip
    figure_legend(fig, handles, ncols=5)
    note = (f"regime from what attention selects (docs/regimes.md#labels); colour: the regimes mixed by the fraction "
            f"of seeds in each (grey: no label); {seeds_note(runs)}; label of the last logged step at or before the "
            "horizon; a panel holds the runs that reached its horizon; fits: results/tables/regime_boundaries")  # fmt: skip
    save(fig, stem, note)


def _or0(value) -> float:
    return float(value) if np.isfinite(value) else 0.0


@plt.rc_context(STYLE)
def boundary_scaling(fits: pd.DataFrame, stem: PathLike) -> None:
    """Each fitted exponent against the horizon, with its 95% profile interval and the theory's
    value: one row per boundary, one column per exponent (a of d, b of n, e of log d log n), so a
    reader sees whether an exponent settles as training goes on."""
    boundaries = list(dict.fromkeys(fits["boundary"]))
    params = [("a", "exponent of d", "theory_a"), ("b", "exponent of n", "theory_b"), ("e", "log d log n term", None)]
    fig, axes = plt.subplots(len(boundaries), len(params), figsize=(4.2 * len(params), 3.3 * len(boundaries)),
                             squeeze=False, sharex=True, layout="constrained")  # fmt: skip
    for i, boundary in enumerate(boundaries):
        rows = fits[fits["boundary"] == boundary].sort_values("horizon")
        colour = BOUNDARY_COLOURS.get(boundary, "0.2")
        for j, (p, label, theory) in enumerate(params):
            ax = axes[i, j]
            h, est = rows["horizon"].to_numpy(float), rows[p].to_numpy(float)
            low, high = rows[f"{p}_low"].to_numpy(float), rows[f"{p}_high"].to_numpy(float)
            span = np.nanmax(np.abs(np.r_[est, low, high, 0.5])) * 1.3 if np.isfinite(est).any() else 1.0
            lo_plot, hi_plot = np.where(np.isfinite(low), low, -span), np.where(np.isfinite(high), high, span)
            ax.errorbar(h, est, yerr=[est - lo_plot, hi_plot - est], fmt="o", color=colour, capsize=3, ms=5)
            for k in np.flatnonzero(~np.isfinite(low) | ~np.isfinite(high)):
                if np.isfinite(est[k]):
                    ax.annotate("open", (h[k], est[k]), textcoords="offset points", xytext=(6, 0), fontsize=7)
            value = rows[theory].iloc[0] if theory else 0.0
            ax.axhline(value, color="0.3", ls="--", lw=1.0, label=f"theory: {value:g}" if theory else "product form: 0")
            ax.axhline(0, color="0.8", lw=0.6)
            ax.set_xscale("log")
            ax.set_ylim(-span, span)
            ax.set_title(f"{boundary}: {label}", fontsize=9)
            ax.legend(fontsize=7, loc="best")
            if i == len(boundaries) - 1:
                ax.set_xlabel("horizon (gradient steps)")
    note = ("maximum-likelihood fits of P(side) = sigmoid(k (log ||mu|| - log c - a log d - b log n)) over every atlas "
            "run at each horizon, bars 95% profile-likelihood intervals ('open': not closed by the data); "
            "results/tables/regime_boundaries")  # fmt: skip
    save(fig, stem, note)


@plt.rc_context(STYLE)
def generalization_delay(runs: pd.DataFrame, curves: pd.DataFrame, stem: PathLike, bands: int) -> None:
    """The fit time and the generalization time as survival curves: per SNR band, the
    Kaplan-Meier fraction of runs that have reached each by a step (censored runs kept: the curve
    stops short of 1 where some never do by the horizon)."""
    ok = runs[runs["status"] == "ok"]
    band = dict(zip(ok["run_id"], survival.snr_bands(ok["snr"], bands)))
    order = ok.assign(band=ok["run_id"].map(band)).groupby("band")["snr"].min().sort_values().index
    colours = dict(zip(order, plt.get_cmap("viridis")(np.linspace(0.1, 0.85, len(order)))))
    fig, axes = plt.subplots(1, len(survival.TIMES), figsize=(5.2 * len(survival.TIMES), 4.2), sharey=True,
                             layout="constrained")  # fmt: skip
    for ax, (time, title) in zip(np.atleast_1d(axes), survival.TIMES.items()):
        times = survival.intervals(ok, curves, time)
        times = times.assign(band=times["run_id"].map(band))
        for b in order:
            group = times[times["band"] == b]
            if group.empty:
                continue
            km = survival.kaplan_meier(group, b)
            reached = 1 - km.survival_function_.iloc[:, 0]
            ax.step(reached.index, reached.to_numpy(), where="post", color=colours[b],
                    label=f"SNR {b} ({len(group)} runs, {int(group['censored'].sum())} censored)")  # fmt: skip
        ax.set_xscale("symlog", linthresh=1)
        ax.set_xlabel("gradient step")
        ax.set_title(f"{title}: Kaplan-Meier", fontsize=10)
        ax.legend(fontsize=7, loc="upper left")
    np.atleast_1d(axes)[0].set_ylabel("fraction of runs reached")
    note = (f"fit time: flipped labels fitted from then on; generalization time: attention selects at test time from then "
            f"on (docs/regimes.md#milestones); {seeds_note(ok)}; SNR = ||mu|| / (sigma sqrt d) in quantile bands; "
            "censored at the horizon; regressions: results/tables/generalization_times")  # fmt: skip
    save(fig, stem, note)
