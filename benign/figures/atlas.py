"""Figures of the regime atlas (docs/regimes.md): the regime map over (d, ||mu||) per n and
horizon, the fitted exponents against the horizon, and the fit and generalization times as
survival curves."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import NullFormatter

from benign.analysis import gap_growth, survival
from benign.analysis.theory import REGIME_LABELS, REGIMES, regime_fractions
from benign.figures.style import REGIME_COLOURS, STYLE, PathLike, figure_legend, save, seeds_note
from benign.synthetic import spec

BOUNDARY_COLOURS = {
    "not overfitting": REGIME_COLOURS["not_overfitting"],
    "selection (harmful below)": REGIME_COLOURS["harmful"],
    "argmax selection": "tab:purple",
    "hard-max selection": "tab:brown",
}

NORM = spec.TEX["signal_norm"]  # ||mu|| as the run spec writes it


# the boundaries drawn on the map, and the label each reads: the colours' two (the regime is read by
# the flipped labels' fit and by r), and the hard-max readout's, the long-time selection label the
# docs' harmful boundary is (r's contour rises as d^(1/2), an SNR contour; the hard max's as d^(1/4))
DRAWN = {
    "not overfitting": "flipped labels fitted below it (the colours' label)",
    "selection (harmful below)": "by r, the normalised test loss (the colours' label)",
    "hard-max selection": "by the hard-max readout's test error (the long-time label)",
}


def _law_curves(row: pd.Series, d: np.ndarray, n: float) -> tuple[np.ndarray, np.ndarray]:
    """||mu||* of law (i), c d^a n^b, and of the theory's law with a log factor, at (d, n)."""
    fitted = row["c"] * d ** _or0(row["a"]) * n ** _or0(row["b"])
    b = _or0(row["b_theory_law"]) if row["theory_b"] == 0.0 else row["theory_b"]
    theory = row["c_theory_law"] * d ** row["theory_a"] * np.log(d) ** _or0(row["gamma"]) * n**b
    return fitted, theory


@plt.rc_context(STYLE)
def regime_map(runs: pd.DataFrame, labels: pd.DataFrame, fits: pd.DataFrame, stem: PathLike) -> None:
    """The regime atlas over log d: one row of panels per horizon, one column per n; each (d,
    ||mu||) cell's colour mixes the regimes' colours by the fraction of seeds in each; lines: the
    boundaries of the regime-boundaries table ``fits`` at that n (solid: law (i) c d^a n^b; dashed:
    the theory's exponents with a log factor), drawn only where law (i) predicts held-out lines
    better than the base rate (a panel says which it leaves out). ``runs`` and ``labels``: from
    benign.analysis.theory.atlas_labels."""
    horizons, ns = sorted(labels["horizon"].unique()), sorted(runs["n"].unique())
    cells = regime_fractions(labels, runs, ["d", "n", "signal_norm"])
    fig, axes = plt.subplots(len(horizons), len(ns), figsize=(3.3 * len(ns), 3.1 * len(horizons)), squeeze=False,
                             sharex=True, sharey=True, layout="constrained")  # fmt: skip
    for i, horizon in enumerate(horizons):
        for j, n in enumerate(ns):
            ax = axes[i, j]
            at = cells[(cells["horizon"] == horizon) & (cells["n"] == n)]
            colour = sum(np.outer(at[r], REGIME_COLOURS[r]) for r in REGIMES)
            colour = np.clip(colour + np.outer(1 - at[list(REGIMES)].sum(axis=1), [0.8, 0.8, 0.8]), 0, 1)
            ax.scatter(at["d"], at["signal_norm"], c=colour, marker="s", s=22, edgecolors="none")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"n = {n:g}, horizon {horizon:,}", fontsize=9)
            if at.empty:  # no run of this n reached the horizon: no fit to draw here
                ax.text(0.5, 0.5, "no run to this horizon", ha="center", va="center", transform=ax.transAxes,
                        fontsize=8, color="0.4")  # fmt: skip
                continue
            d_line = np.geomspace(at["d"].min(), at["d"].max(), 60)
            skipped, dropped = [], []
            for _, row in fits[(fits["horizon"] == horizon) & fits["boundary"].isin(DRAWN)].iterrows():
                if row["left_out_d"] != "none":
                    dropped.append(f"{row['boundary']}: {row['left_out_d']}")
                if row["out_of_sample"] != "beats the base rate" or not np.isfinite(row["c"]):
                    skipped.append(row["boundary"])
                    continue
                fitted, theory = _law_curves(row, d_line, n)
                ax.plot(d_line, fitted, color=BOUNDARY_COLOURS[row["boundary"]], lw=1.6)
                if np.isfinite(theory).all():
                    ax.plot(d_line, theory, color=BOUNDARY_COLOURS[row["boundary"]], lw=1.1, ls="--")
            notes = (["not drawn, not better than the\nbase rate held out: " + ", ".join(skipped)] if skipped else []) + (
                ["left out by the step check: " + "; ".join(dropped)] if dropped else [])  # fmt: skip
            if notes:
                ax.text(0.03, 0.03, "\n".join(notes), transform=ax.transAxes, fontsize=6, color="0.3", va="bottom")
            if i == len(horizons) - 1:
                ax.set_xlabel("token dimension d")
            if j == 0:
                ax.set_ylabel(f"signal norm {NORM}")
    handles = [Patch(facecolor=c, label=REGIME_LABELS[r]) for r, c in REGIME_COLOURS.items()]
    handles += [Line2D([], [], color=BOUNDARY_COLOURS[b], lw=1.6, label=f"{b}: {words}") for b, words in DRAWN.items()]
    handles += [Line2D([], [], color="0.3", lw=1.6, label="solid: law (i), c d^a n^b"),
                Line2D([], [], color="0.3", lw=1.1, ls="--", label="dashed: theory's exponents x (ln d)^gamma")]  # fmt: skip
    figure_legend(fig, handles, ncols=3)
    note = (f"colour: the regime by the flipped labels' fit and by r (benign where r <= the threshold; harmful "
            f"otherwise), not by the hard-max readout, whose boundary is the brown line (docs/regimes.md#labels); "
            f"the regimes mixed by the fraction "
            f"of seeds in each (grey: no label); {seeds_note(runs)}; label of the last logged step at or before the "
            "horizon; a panel holds the runs that reached its horizon; laws fitted to the crossings, drawn where they "
            "beat the base rate on held-out lines: results/tables/regime_boundaries")  # fmt: skip
    save(fig, stem, note + f"; fixed: {spec.fixed_text(runs)}")


@plt.rc_context(STYLE)
def step_convergence(convergence: pd.DataFrame, runs: pd.DataFrame, stem: PathLike) -> None:
    """Per boundary, against d: the largest change of a check crossing's bracket midpoint (in
    ln ||mu||*) when the step is divided by the check's factor (the same normalised time), beside
    the width of one seed's bracket (a crossing that moves beyond its own interval); a d where one
    did is marked, and left out of the fits; the title gives the change of law (i)'s exponent of d
    at the finer step (benign.analysis.convergence)."""
    names = list(dict.fromkeys(convergence["boundary"])) if len(convergence) else []
    fig, axes = plt.subplots(1, max(len(names), 1), figsize=(3.4 * max(len(names), 1), 3.0), squeeze=False,
                             sharey=True, layout="constrained")  # fmt: skip
    for ax, name in zip(axes[0], names):
        rows = convergence[convergence["boundary"] == name].sort_values("d")
        d, largest = rows["d"].to_numpy(float), rows["largest_shift"].fillna(0.0).to_numpy(float)
        converged = rows["verdict"].to_numpy() == "converged"
        ax.axhline(np.log(np.sqrt(2)), color="0.5", ls="--", lw=1.0, label="one seed's bracket")
        ax.plot(d[converged], largest[converged], "o", ms=5, color=BOUNDARY_COLOURS.get(name, "0.2"), label="converged")
        ax.plot(d[~converged], largest[~converged], "x", ms=7, color="black", label="left out of the fits")
        ax.set_xscale("log")
        ax.set_xlim(d.min() / 2, d.max() * 2)
        ax.set_ylim(-0.02, max(0.5, float(largest.max()) * 1.2))
        ax.set_xlabel("token dimension d")
        change, low, high = rows.iloc[0][["a_change", "a_change_low", "a_change_high"]].to_numpy(float)
        note = f"\nchange of a: {change:+.3f} [{low:+.3f}, {high:+.3f}]" if np.isfinite(change) else ""
        ax.set_title(name + note, fontsize=8)
        ax.legend(fontsize=6, loc="upper left")
    axes[0, 0].set_ylabel(f"largest change of ln {NORM}*")
    factor = int(convergence["factor"].iloc[0]) if len(convergence) else 2
    note = (f"the check's (d, n, seed) lines at the step divided by {factor} for {factor} times the steps, read at the "
            "same normalised time as the atlas's longest horizon, on the same norms; a crossing moves beyond its "
            "own interval where its brackets at the two steps are disjoint; results/tables/step_convergence")  # fmt: skip
    save(fig, stem, note + f"; the atlas fixed: {spec.fixed_text(runs)}")


def _or0(value) -> float:
    return float(value) if np.isfinite(value) else 0.0


def _decades(fits: pd.DataFrame) -> list[tuple[str, float, float]]:
    """The decade-slope columns of the table, with each decade's ends in d."""
    out = []
    for column in fits.columns:
        if column.startswith("a[") and column.endswith("]"):
            k0, k1 = (float(v) for v in column[2:-1].split(","))
            out.append((column, k0, k1))
    return sorted(out, key=lambda item: item[1])


@plt.rc_context(STYLE)
def boundary_scaling(fits: pd.DataFrame, runs: pd.DataFrame, stem: PathLike) -> None:
    """Per boundary: the local slope of log ||mu||* in each decade of d (law (iii)) with its 95%
    interval, one colour per horizon, beside the theory's exponent of d and law (i)'s a over the
    whole range; and a, b and e of law (i) against the horizon. A reader sees whether the slope
    falls towards the theory's value as d grows, and whether it settles as training goes on."""
    boundaries = list(dict.fromkeys(fits["boundary"]))
    params = [("a", "exponent of d", "theory_a"), ("b", "exponent of n", "theory_b"), ("e", "log d log n term", None)]
    decades = _decades(fits)
    horizons = sorted(fits["horizon"].unique())
    shades = dict(zip(horizons, plt.get_cmap("viridis")(np.linspace(0.1, 0.8, len(horizons)))))
    fig, axes = plt.subplots(len(boundaries), 1 + len(params), figsize=(4.0 * (1 + len(params)), 3.2 * len(boundaries)),
                             squeeze=False, layout="constrained")  # fmt: skip
    for i, boundary in enumerate(boundaries):
        rows = fits[fits["boundary"] == boundary].sort_values("horizon")
        ax = axes[i, 0]
        for k, (_, row) in enumerate(rows.iterrows()):
            centres = np.array([np.sqrt(k0 * k1) for _, k0, k1 in decades]) * (1 + 0.12 * (k - 1))
            est = np.array([row[c] for c, _, _ in decades], dtype=float)
            low = np.array([row[f"{c}_low"] for c, _, _ in decades], dtype=float)
            high = np.array([row[f"{c}_high"] for c, _, _ in decades], dtype=float)
            ok = np.isfinite(est)
            ax.errorbar(centres[ok], est[ok], yerr=[est[ok] - low[ok], high[ok] - est[ok]], fmt="o", ms=4, capsize=2,
                        color=shades[row["horizon"]], label=f"horizon {row['horizon']:,}")  # fmt: skip
        ax.axhline(
            rows["theory_a"].iloc[0], color="0.3", ls="--", lw=1.0, label=f"theory: {rows['theory_a'].iloc[0]:g}"
        )
        ax.set_xscale("log")
        if decades:  # the decades' span, also where no slope of a boundary could be fitted
            ax.set_xlim(decades[0][1], decades[-1][2])
        ax.set_xlabel("d (centre of the decade)")
        ax.set_title(f"{boundary}: slope per decade of d", fontsize=9)
        ax.legend(fontsize=6, loc="best")
        colour = BOUNDARY_COLOURS.get(boundary, "0.2")
        for j, (p, label, theory) in enumerate(params, start=1):
            ax = axes[i, j]
            h, est = rows["horizon"].to_numpy(float), rows[p].to_numpy(float)
            low, high = rows[f"{p}_low"].to_numpy(float), rows[f"{p}_high"].to_numpy(float)
            span = np.nanmax(np.abs(np.r_[est, low, high, 0.5])) * 1.3 if np.isfinite(est).any() else 1.0
            span = min(span, 3.0)
            lo_plot, hi_plot = np.where(np.isfinite(low), low, -span), np.where(np.isfinite(high), high, span)
            ax.errorbar(h, est, yerr=[est - lo_plot, hi_plot - est], fmt="o", color=colour, capsize=3, ms=5)
            value = rows[theory].iloc[0] if theory else 0.0
            ax.axhline(value, color="0.3", ls="--", lw=1.0, label=f"theory: {value:g}" if theory else "product form: 0")
            ax.axhline(0, color="0.8", lw=0.6)
            ax.set_xscale("log")
            ax.set_xlim(min(horizons) / 1.5, max(horizons) * 1.5)
            ax.set_ylim(-span, span)
            ax.set_title(f"{boundary}: {label}, law (i)", fontsize=9)
            ax.legend(fontsize=7, loc="best")
            if i == len(boundaries) - 1:
                ax.set_xlabel("horizon (gradient steps; time = step size x steps)")
    note = ("crossings of each (d, n, seed) line fitted by interval-censored maximum likelihood; bars 95% intervals; "
            "left: law (iii), one slope per decade of d; right: law (i) c d^a n^b (e: a log d log n term added); "
            "results/tables/regime_boundaries")  # fmt: skip
    save(fig, stem, note + f"; fixed: {spec.fixed_text(runs)}")


@plt.rc_context(STYLE)
def generalization_delay(runs: pd.DataFrame, curves: pd.DataFrame, stem: PathLike, bands: int) -> None:
    """The fit time and the generalization time as survival curves: per SNR band, the
    Kaplan-Meier fraction of runs that have reached each by a step (censored runs kept: the curve
    stops short of 1 where some never do by the horizon; the full-length runs: survival.full_length)."""
    ok = survival.full_length(runs[runs["status"] == "ok"])
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
    save(fig, stem, note + f"; fixed: {spec.fixed_text(ok)}")


@plt.rc_context(STYLE)
def gap_clock(runs: pd.DataFrame, labels: pd.DataFrame, curves: pd.DataFrame, stem: PathLike) -> None:
    """The theory's clock on the way to the benign regime (the runs benign.analysis.gap_growth.benign_growth
    takes) at the longest horizon: g(Lambda + log T) of the
    clean training samples, less its start, against the steps (a line of slope 1 is linear
    growth); the normalised test loss r against the steps (slope -1 for a constant drive); and
    the rate of g's growth against ||mu||, per d."""
    horizon = int(labels["horizon"].max())
    info = runs.drop_duplicates("run_id").set_index("run_id")
    growth = gap_growth.benign_growth(runs, curves, labels[labels["horizon"] == horizon])
    band = growth[~growth["saturated"].astype(bool)]
    fig, axes = plt.subplots(1, 3, figsize=(13.5, 4.0), layout="constrained")
    ds = sorted(info.loc[band["run_id"], "d"].unique()) if len(band) else []
    shade = dict(zip(ds, plt.get_cmap("viridis")(np.linspace(0.05, 0.85, max(len(ds), 1)))))
    for run_id, curve in curves[curves["run_id"].isin(band["run_id"])].groupby("run_id"):
        curve = curve[(curve["step"] <= horizon) & (curve["step"] > 0)].sort_values("step")
        start = curves.loc[(curves["run_id"] == run_id) & (curves["step"] == 0), "train_clean_g"]
        colour = shade[info.loc[run_id, "d"]]
        axes[0].plot(curve["step"], curve["train_clean_g"] - float(start.iloc[0]), color=colour, lw=0.6, alpha=0.5)
        axes[1].plot(curve["step"], curve["test_loss_normalised"], color=colour, lw=0.6, alpha=0.5)
    for ax, slope, label in ((axes[0], 1.0, "slope 1 (linear in steps)"), (axes[1], -1.0, "slope -1")):
        t = np.geomspace(max(horizon / 1000, 1), horizon, 10)
        ax.plot(t, (t / t[0]) ** slope * (1.0 if slope > 0 else 0.5), color="0.2", ls="--", lw=1.0, label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("gradient step")
        ax.legend(fontsize=7, loc="best")
    axes[0].set_ylabel("g(Lambda + log T) - g at step 0, clean training samples")
    axes[0].set_title("the theory's clock", fontsize=10)
    axes[1].set_ylabel("normalised test loss r")
    axes[1].set_title("what attention does at test time", fontsize=10)
    for d, g in growth[growth["g_slope"] > 0].groupby("d"):
        axes[2].scatter(g["signal_norm"], g["g_slope"], color=shade.get(d, "0.3"), s=14, label=f"d = {d:g}")
    axes[2].set_xscale("log")
    axes[2].set_yscale("log")
    axes[2].xaxis.set_minor_formatter(NullFormatter())
    axes[2].set_xlabel(f"signal norm {NORM}")
    axes[2].set_ylabel("slope of g on steps")
    axes[2].set_title("the clock's rate", fontsize=10)
    if len(growth):
        axes[2].legend(fontsize=7, loc="best")
    note = (f"runs of the atlas heading for the benign regime at {horizon:,} steps (flipped labels fitted, the hard-max "
            f"readout selecting) whose attention is not saturated at the machine's precision, {len(band)} runs (of "
            f"{len(growth)}), colour: d; {seeds_note(runs)}; Lambda: the relevant logit minus the "
            "log-sum-exp of the others; results/tables/gap_dynamics")  # fmt: skip
    save(fig, stem, note + f"; fixed: {spec.fixed_text(runs)}")


@plt.rc_context(STYLE)
def boundaries_along_time(path: pd.DataFrame, runs: pd.DataFrame, stem: PathLike) -> None:
    """Law (i)'s a, b and c of every boundary against the normalised time, from the first step,
    with 95% intervals, beside the theory's exponents and, for the argmax and hard-max labels, the
    first step's law over the same design (a star at step 1's time); and the lines' mean crossing
    over the law's: a reader sees which exponent was there after one step and how far the
    dynamics move each boundary."""
    terms = [("a", "exponent of d", "theory_a"), ("b", "exponent of n", "theory_b"), ("c", "constant c", None)]
    fig, axes = plt.subplots(1, len(terms) + 1, figsize=(4.2 * (len(terms) + 1), 3.6), squeeze=False,
                             layout="constrained")  # fmt: skip
    boundaries = list(dict.fromkeys(path["boundary"]))
    for j, (term, label, theory) in enumerate(terms):
        ax = axes[0, j]
        for k, boundary in enumerate(boundaries):
            rows = path[path["boundary"] == boundary].sort_values("horizon")
            colour = BOUNDARY_COLOURS.get(boundary, "0.2")
            t = rows["time"].to_numpy(float) * (1 + 0.06 * (k - 1.5))  # side by side at a time
            est, low, high = (rows[f"{term}{s}"].to_numpy(float) for s in ("", "_low", "_high"))
            bars = [np.where(np.isfinite(low), est - low, 0.0), np.where(np.isfinite(high), high - est, 0.0)]
            ax.errorbar(t, est, yerr=bars, fmt="o-", ms=3.5, lw=0.8, capsize=2, color=colour, label=boundary)
            if f"law_{term}" in rows and np.isfinite(rows[f"law_{term}"].iloc[0]):
                ax.plot(rows["time"].iloc[0], rows[f"law_{term}"].iloc[0], marker="*", ms=11, color=colour,
                        mec="k", mew=0.5, ls="none")  # fmt: skip
            if theory:
                ax.axhline(rows[theory].iloc[0], color=colour, ls="--", lw=0.8, alpha=0.7)
        ax.set_xscale("log")
        if term == "c":
            ax.set_yscale("log")
        ax.set_xlabel("normalised time (step size x steps)")
        ax.set_title(f"law (i): {label}", fontsize=9)
    ax = axes[0, -1]  # the lines' mean crossing against the first step's law: how far training moved it
    for k, boundary in enumerate(boundaries):
        rows = path[path["boundary"] == boundary].sort_values("horizon")
        if "shift_from_law" not in rows or not np.isfinite(rows["shift_from_law"]).any():
            continue
        est, low, high = (rows[f"shift_from_law{s}"].to_numpy(float) for s in ("", "_low", "_high"))
        t = rows["time"].to_numpy(float) * (1 + 0.06 * (k - 2.5))
        ax.errorbar(t, est, yerr=[est - low, high - est], fmt="o-", ms=3.5, lw=0.8, capsize=2,
                    color=BOUNDARY_COLOURS.get(boundary, "0.2"))  # fmt: skip
    ax.axhline(0, color="0.4", ls="--", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("normalised time (step size x steps)")
    ax.set_title("ln(||mu||* / the first step's law), mean over lines", fontsize=9)
    star = Line2D([], [], marker="*", ms=10, color="0.5", mec="k", mew=0.5, ls="none", label="first step's law")
    dashed = Line2D([], [], color="0.4", ls="--", lw=0.8, label="theory's exponent")
    handles = [Line2D([], [], color=BOUNDARY_COLOURS.get(b, "0.2"), marker="o", label=b) for b in boundaries]
    figure_legend(fig, [*handles, star, dashed], ncols=3)
    note = ("crossings of each (d, n, seed) line at each horizon, law (i) c d^a n^b by interval-censored maximum "
            "likelihood; bars 95% intervals (the lines' jackknife); the first step's law: "
            "benign.analysis.first_step, fitted over the atlas's (d, n) lines; results/tables/boundaries_along_time")  # fmt: skip
    save(fig, stem, note + f"; fixed: {spec.fixed_text(runs)}")
