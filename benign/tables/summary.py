"""The run's numbers in one page (``results/summary.md``): every number the README's findings
rest on, next to the artifact it comes from, headed by the commit, the machine and the job time.

The README states the findings in words; docs/results.md is this page from a default
reproduction. Nothing here is typed by hand: each line reads a table the run wrote.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign.analysis.boundaries import LABEL_OF, SET_UP
from benign.analysis.gap_growth import mean_exponent
from benign.analysis.w_control import totals
from benign.core.io import write_text
from benign.tables.along_time import WORDS as DRIFT_WORDS
from benign.tables.common import MISSING, PathLike, markdown_table
from benign.tables.real_dynamics import epoch_range, fit_cell


def _f(value, digits: int = 3) -> str:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return str(value)
    return f"{value:.{digits}g}" if np.isfinite(value) else MISSING


def _interval(row: pd.Series, name: str) -> str:
    return f"{_f(row[name])} [{_f(row[f'{name}_low'])}, {_f(row[f'{name}_high'])}]"


# (table, heading, what its rows say), in the page's order: each row function registers the
# tables it reads with :func:`section`, where it is defined
SECTIONS: list[tuple[str, str, object]] = []


def section(*entries: tuple[str, str]):
    """Register a row function under each (table, heading) of ``entries``, in order."""

    def register(rows):
        SECTIONS.extend((name, heading, rows) for name, heading in entries)
        return rows

    return register


@section(("synthetic_regimes", "Named settings"))
def _regimes(table: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({
        "model": table["model"], "setting": table["setting"], "d": table["d"], "||mu||": table["signal_norm"],
        "regime (of the means)": table["regime"], "seeds' regimes": table["seed_regimes"],
        "test acc": table["test_acc_mean"].map(_f), "r": table["test_loss_normalised_mean"].map(_f),
        "flipped labels fitted from step": table["flipped_fitted_from_step"],
    })  # fmt: skip


@section(("step_convergence", "The atlas's step check (step halved, steps doubled)"))
def _step_check(table: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({
        "boundary": table["boundary"], "d": table["d"].map(_f),
        "crossings (closed; changed; moved beyond their own)": [
            f"{int(p)} ({int(c)}; {int(h)}; {int(m)})"
            for p, c, h, m in zip(table["pairs"], table["closed_pairs"], table["changed"], table["moved"])],
        "verdict": table["verdict"],
        "change of a at the finer step [95%]": [
            f"{_f(r['a_change'])} (no interval: every line alike)" if r["a_change_low"] == r["a_change_high"]
            else _interval(r, "a_change") for _, r in table.iterrows()],
        "paired shift, mean over lines": [
            f"{_f(r['shift'])} (resolved to ±{_f(r['shift_grid'], 2)}): {r['shift_verdict']}"
            if np.isfinite(r.get("shift_grid", np.nan)) else f"{_interval(r, 'shift')}: {r.get('shift_verdict', MISSING)}"
            for _, r in table.iterrows()],
    })  # fmt: skip


def _worded(r: pd.Series, name: str, theory: float) -> str:
    if r[f"{name}_verdict"] == "set by the grid":
        return f"set by the grid (±{_f(r[f'{name}_grid'], 2)})"
    set_up = SET_UP.get((LABEL_OF.get(r["boundary"]), name))
    given = f"; {set_up[1]} gives {_f(set_up[0])} before any dynamics" if set_up else ""
    return f"{_interval(r, name)}: {r[f'{name}_verdict']} (theory {_f(theory)} ± {_f(r['margin'])}{given})"


@section(("regime_boundaries", "Regime boundaries of the atlas"))
def _boundaries(table: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for _, r in table.iterrows():
        rows.append({
            "boundary": r["boundary"], "horizon (time)": f"{int(r['horizon'])} ({_f(r['time'])})",
            "crossings (bracketed; seeds per line)": f"{int(r['crossings'])} ({int(r['bracketed'])}; >= "
                                                     f"{int(r['seeds_per_line_min'])})",
            "a (d), 95% interval": _worded(r, "a", r["theory_a"]),
            "b (n), 95% interval": _worded(r, "b", r["theory_b"]),
            "sigma (floor)": f"{_f(r['sigma'])} ({_f(r['sigma_floor'])})",
            "out of sample: (i) over base, per crossing": f"{_f(r['heldout_gain'])} ± {_f(r['heldout_gain_se'], 2)}: "
                                                          f"{r['out_of_sample']}",
            "drift since the previous horizon, ln ||mu||* per decade of time": (
                f"{_interval(r, 'settle_drift')}: {r['settle_verdict']}"
                                                 if isinstance(r.get("settle_verdict"), str) else MISSING),
            "left out by the step check": r["left_out_d"],
        })  # fmt: skip
    return pd.DataFrame(rows)


@section(("regime_boundaries", "Regime boundaries: the local slope of each decade of d"))
def _slopes(table: pd.DataFrame) -> pd.DataFrame:
    decades = [c for c in table.columns if c.startswith("a[") and c.endswith("]")]
    out = table[["boundary", "horizon"]].copy()
    for column in decades:
        out[f"slope, d {column[2:-1].replace(',', ' to ')}"] = [
            f"set by the grid (±{_f(r[f'{column}_grid'], 2)})" if r[f"{column}_grid_set"] else _interval(r, column)
            for _, r in table.iterrows()
        ]
    return out


@section(("boundaries_along_time", "The boundaries along time, from the first step"))
def _along_time(table: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({
        "boundary": table["boundary"], "steps (time)": [f"{int(h)} ({_f(t)})" for h, t in zip(table["horizon"], table["time"])],
        "a [95%]": [_interval(r, "a") for _, r in table.iterrows()],
        "b [95%]": [_interval(r, "b") for _, r in table.iterrows()],
        "c [95%]": [_interval(r, "c") for _, r in table.iterrows()],
        "drift, ln ||mu||* per decade of time": [
            f"{_interval(r, 'drift')}: {DRIFT_WORDS.get(r['drift_verdict'], r['drift_verdict'])}"
            if isinstance(r.get("drift_verdict"), str) else MISSING for _, r in table.iterrows()],
        "shift since the reference horizon, ln [95%]": [
            _interval(r, "since_shift") if np.isfinite(r.get("since_shift", np.nan)) else MISSING
            for _, r in table.iterrows()],
        "shift from the first step's law, ln [95%]": [
            _interval(r, "shift_from_law") if np.isfinite(r.get("shift_from_law", np.nan)) else MISSING
            for _, r in table.iterrows()],
        "drift within the resolution per decade from (steps)": table["settled_from"].map(
            lambda v: _f(v) if np.isfinite(v) else "never"),
    })  # fmt: skip


@section(("boundary_limits", "The selection boundaries at step 1, at the last horizon and at the computed limit"))
def _limits(table: pd.DataFrame) -> pd.DataFrame:
    fits = table[table["kind"] == "fit"]
    horizon = fits["horizon"].map(lambda v: "inf" if not np.isfinite(v) else _f(v))
    return pd.DataFrame({
        "boundary": fits["boundary"], "stage (steps)": [f"{s} ({h})" for s, h in zip(fits["stage"], horizon)],
        "crossings (bracketed)": [f"{int(c)} ({int(b)})" for c, b in zip(fits["crossings"], fits["bracketed"])],
        "a [95%]": [_interval(r, "a") for _, r in fits.iterrows()],
        "b [95%]": [_interval(r, "b") for _, r in fits.iterrows()],
        "c [95%] (at d = n = 1)": [_interval(r, "c") for _, r in fits.iterrows()],
        "shift from the first step's law, ln [95%]": [_interval(r, "shift_from_law") for _, r in fits.iterrows()],
    })  # fmt: skip


@section(("boundary_limits", "The plateaus against the computed limit: shifts over the atlas's lines"))
def _limit_shifts(table: pd.DataFrame) -> pd.DataFrame:
    shifts = table[table["kind"] == "shift"]
    return pd.DataFrame({
        "boundary": shifts["boundary"], "comparison": shifts["stage"], "lines": shifts["pairs"].map(_f),
        "shift, ln [95%]": [_interval(r, "shift") for _, r in shifts.iterrows()],
        "its slope in ln d [95%]": [_interval(r, "shift_per_ln_d") for _, r in shifts.iterrows()],
        "words (margin)": [f"{r['words']} (±{_f(r['margin'])})" if isinstance(r["words"], str) and r["words"]
                           else MISSING for _, r in shifts.iterrows()],
    })  # fmt: skip


@section(("limit_shifts", "The plateaus' shifts from the computed limit, per (d, n) cell"))
def _limit_cells(table: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({
        "boundary": table["boundary"], "comparison": table["comparison"], "d": table["d"].map(_f), "n": table["n"],
        "seeds (closed)": [f"{int(s)} ({int(c)})" for s, c in zip(table["seeds"], table["closed"])],
        "shift, ln [95% over seeds]": [_interval(r, "shift") for _, r in table.iterrows()],
        "limit / first step's law": (table["limit_crossing"] / table["law_crossing"]).map(_f),
        "law's omitted term, ln": table["law_omitted"].map(_f),
        "twin off the global selection; locally optimal; changed": [
            f"{_f(a)}; {_f(b)}; {_f(c)}" for a, b, c in zip(table["differs"], table["locally_optimal"], table["changed"])],
        "cos(twin's p, p^mm)": table["cosine"].map(_f),
        "atlas lines holding the global selection's kinds near the crossing (runs)": [
            f"{_f(r['lines_same'])} of {_f(r['lines'])} ({_f(r['runs_same'])} of {_f(r['runs'])})"
            for _, r in table.iterrows()],
    })  # fmt: skip


@section(("n_laws", "The exponent of n, with its local slopes and the flipped samples' own crossings"))
def _n_laws(table: pd.DataFrame) -> pd.DataFrame:
    slopes = [c for c in table.columns if c.startswith("b[") and c.endswith("]")]
    rows = [r for _, r in table.iterrows()]
    return pd.DataFrame({
        "boundary": table["boundary"], "steps": table["horizon"],
        "b [95%]": [_interval(r, "b") for r in rows],
        "theory's b": table["theory_b"].map(_f),
        "local slopes of ln n [95%]": ["; ".join(f"{c[2:-1]}: {_interval(r, c)}" for c in slopes) for r in rows],
        "label's b - the samples' [95%] (order statistic's)": [
            f"{_interval(r, 'label_minus_samples')} ({_f(r['order_b'])})"
            if np.isfinite(r.get("label_minus_samples", np.nan)) else MISSING for r in rows],
    })  # fmt: skip


@section(("predictor_check", "The regime predictor checked off the grid: coverage over cells"))
def _predictor_check(table: pd.DataFrame) -> pd.DataFrame:
    rows = [r for _, r in table.iterrows()]

    def share(r, name):
        low, high = r[f"{name}_low"], r[f"{name}_high"]
        ends = f" [{low:.2f}, {high:.2f}]" if np.isfinite(low) and np.isfinite(high) else ""
        return f"{r[name]:.2f}{ends}"

    return pd.DataFrame({
        "boundary": table["boundary"], "steps": table["horizon"],
        "cells (region)": [f"{r['cells']} ({r['region']})" for r in rows],
        "seeds inside / straddling / outside": [f"{r['inside']} / {r['straddles']} / {r['outside']}" for r in rows],
        "coverage, inside only [95%]": [share(r, "cover_low") for r in rows],
        "coverage, straddling counted [95%]": [share(r, "cover_high") for r in rows],
        "nominal 95%": table["verdict"],
        "bias, mean z [95%] (seeds scored)": [
            f"{_interval(r, 'bias_z')} ({_f(r['scored'])})" if np.isfinite(r.get("bias_z", np.nan)) else MISSING
            for r in rows],
        "spread of z [95%]": [_interval(r, "spread_z") for r in rows],
        "power vs a 0.1 bias": table["power"].map(lambda v: _f(v, 2)),
        "bias": table["bias_verdict"],
        "spread": table["spread_verdict"],
    })  # fmt: skip


@section(("w_control", "What training W does to the atlas's crossings (W-frozen twins)"))
def _w_control(table: pd.DataFrame) -> pd.DataFrame:
    out = totals(table).rename(columns={"lines": "pairs"})
    lower = (
        table[table["shift_mean"] < 0]
        .groupby(["boundary", "horizon"], sort=False)["d"]
        .agg(lambda d: ", ".join(f"{v:g}" for v in sorted(d)))
    )
    out["d where W trained lies lower"] = [lower.get((b, h), "none") for b, h in zip(out["boundary"], out["horizon"])]
    return out  # fmt: skip


@section(("gap_dynamics", "The attention gap's clock on the way to the benign regime"))
def _gaps(table: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for column, which in (("g_exponent", "clean training samples"), ("g_test_exponent", "test samples")):
        for r in mean_exponent(table[~table["saturated"].astype(bool)], column).itertuples():
            rows.append({"horizon": int(r.horizon), "gap of the": which, "runs (lines)": f"{r.runs} ({r.lines})",
                         "mean local exponent of g [95%, by line]": f"{_f(r.mean)} [{_f(r.low)}, {_f(r.high)}]",
                         "median local slope of log r": _f(table[table["horizon"] == r.horizon]["r_slope"].median())})  # fmt: skip
    return pd.DataFrame(rows)


@section(("generalization_times", "Fit and generalization times (censored regressions)"))
def _times(table: pd.DataFrame) -> pd.DataFrame:
    first = table.drop_duplicates(["group", "time", "form"])
    return pd.DataFrame({
        "runs heading for": first["group"], "time": first["time"], "form": first["form"].fillna("").replace("", "not fitted: every time censored"),
        "AIC": first["aic"].map(_f), "better (lower AIC)": first["better_form"].map({True: "yes", False: "no"}),
        "runs (censored; units)": [f"{int(r)} ({int(c)}; {int(n)} {u})" for r, c, n, u in
                                   zip(first["runs"], first["censored"], first["units"], first["unit"].fillna(""))],
    })  # fmt: skip


@section(("delay_scan", "Delay scan in the benign band (runs per outcome)"))
def _delay_scan(table: pd.DataFrame) -> pd.DataFrame:
    kinds = ["selection_after_fit", "together", "selection_before_fit", "fit_only", "selection_only", "neither"]
    out = table.groupby("T")[kinds].sum().reset_index()
    after = table[table["selection_after_fit"] > 0].groupby("T")["signal_norm"].agg(["min", "max"])
    out["||mu|| where selection comes after the fit"] = out["T"].map(
        lambda t: f"{_f(after.loc[t, 'min'])} to {_f(after.loc[t, 'max'])}" if t in after.index else MISSING
    )
    return out.rename(columns={k: k.replace("_", " ") for k in kinds})


@section(("one_step_regime", "The one-step regime of the paper's lr"))
def _one_step(table: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({
        "n": table["n"], "||mu||": table["signal_norm"].map(_f), "one-step d*": table["d_star"].map(_f),
        "step size at d*": table["step_size_star"].map(_f), "SNR sqrt(n) at d*": table["snr_sqrt_n_star"].map(_f),
    })  # fmt: skip


@section(("max_margin", "Attention-SVM check, at the largest horizon"))
def _max_margin(table: pd.DataFrame) -> pd.DataFrame:
    last = table[table["horizon"] == table.groupby("model")["horizon"].transform("max")]
    return pd.DataFrame({
        "model": last["model"], "setting": last["setting"], "step": last["step"],
        "cos(p, p^mm)": last["cosine"].map(_f), "random selection": last["cosine_random"].map(_f),
        "step-1 selection": last["cosine_early"].map(_f), "relevant tokens' mean": last["cosine_relevant"].map(_f),
        "locally optimal": last["locally_optimal"].map(_f),
    })  # fmt: skip


@section(("real_eta0.1", "Real data, eta = 0.1 (Table 2)"), ("real_eta0_0.2", "Real data, eta = 0 and 0.2 (Table 6)"))
def _real(table: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({
        "data set": table["dataset"], "n": table["n"], "eta": table["eta"],
        "test acc (ours)": [f"{_f(m, 3)} ± {_f(s, 2)}" for m, s in zip(table["test_acc_mean"], table["test_acc_std"])],
        "test acc (paper)": table["paper_test_acc_mean"].map(_f),
        "clean baseline (ours / paper)": [f"{_f(a)} / {_f(b)}" for a, b in
                                           zip(table["baseline_acc_mean"], table["paper_baseline_acc_mean"])],
        "train loss": table["train_loss_mean"].map(_f),
    })  # fmt: skip


def _fixed(value, digits: int) -> str:
    value = float(value)
    return f"{value:.{digits}f}" if np.isfinite(value) else MISSING


@section(("real_dynamics", "Real data: test accuracy over phase 2, memorising, re-initialisation"))
def _real_dynamics(table: pd.DataFrame) -> pd.DataFrame:
    def pct(col: str) -> list[str]:
        return [
            f"{_fixed(100 * m, 1)} ± {_fixed(100 * s, 1)}" for m, s in zip(table[f"{col}_mean"], table[f"{col}_std"])
        ]

    return pd.DataFrame({
        "data set": table["dataset"], "n": table["n"], "eta": table["eta"],
        "baseline / epoch 0 / uniform (%)": [
            f"{_fixed(100 * a, 1)} / {_fixed(100 * b, 1)} / {_fixed(100 * c, 1)}" for a, b, c in
            zip(table["baseline_acc_mean"], table["reinit_test_acc_mean"], table["uniform_test_acc_mean"])],
        "attention share": table["attention_share_mean"].map(lambda v: _fixed(v, 2)),
        "peak (%)": pct("peak_test_acc"),
        "peak epoch": [epoch_range(a, b) for a, b in zip(table["peak_epoch_min"], table["peak_epoch_max"])],
        "final (%)": pct("test_acc"),
        "memorised from epoch": [fit_cell(r) for r in table.itertuples()],
        "lost before / after memorising (points)": [
            f"{_fixed(100 * a, 1)} / {_fixed(100 * b, 1)}" for a, b in
            zip(table["fall_before_fit_mean"], table["fall_after_fit_mean"])],
    })  # fmt: skip


def summary(tables: dict[str, PathLike], path: PathLike, header: dict[str, str], jobs: dict[str, tuple[str, float]],
            forecast: dict[str, tuple[str, float]] | None = None) -> str:  # fmt: skip
    """Write the summary of the tables ``tables`` ({name: CSV path}) to ``path``: ``header``
    (commit, machine, ...) first, the training jobs' time per half and per part (``jobs``:
    {part: (half, seconds)}, benign.plan.forecast.measured) beside the ``forecast`` of each
    ({part: (half, seconds)}, benign.plan.forecast), then each table's numbers under the
    artifact's name."""
    lines = ["# What the runs show: the numbers", ""]
    lines += [f"- {key}: {value}" for key, value in header.items()]
    forecast = forecast or {}
    for half in dict.fromkeys(h for h, _ in jobs.values()):
        seconds = sum(s for h, s in jobs.values() if h == half)
        expected = sum(s for h, s in forecast.values() if h == half)
        lines.append(f"- job time, {half}: {seconds / 60:.1f} min" + _beside(seconds, expected))
        for part, (h, seconds) in sorted(jobs.items(), key=lambda kv: -kv[1][1]):
            if h == half:
                lines.append(f"  - {part}: {seconds / 60:.1f} min" + _beside(seconds, forecast.get(part, (h, 0.0))[1]))
    lines.append("")
    for name, heading, rows in SECTIONS:
        if name not in tables:
            continue
        lines += [f"## {heading}", "", f"From `results/tables/{name}.csv`.", ""]
        lines.append(markdown_table(rows(pd.read_csv(tables[name]))) + "\n")
    text = "\n".join(lines)
    write_text(path, text)
    return text


def _beside(seconds: float, expected: float) -> str:
    return f" (forecast: {expected / 60:.1f} min, {seconds / expected:.2f}x)" if expected else ""
