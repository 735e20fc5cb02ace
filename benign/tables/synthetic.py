"""The synthetic-data table: the named settings with their final metrics and regimes, and the
seeds' regimes at several horizons (a label depends on when a run is stopped)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from benign import registry
from benign.metrics import first_step_per_run
from benign.tables.common import MISSING, PathLike, num, seed_stats, seeds_cell, write
from benign.theory import REGIME_LABELS, REGIMES, classify_regime, classify_regimes, regimes_at

SETTING_LABELS = {**REGIME_LABELS, "delayed": "Benign overfitting, long training"}


def synthetic_regimes(
    runs: pd.DataFrame,
    stem: PathLike,
    settings: Sequence[str] = ("harmful", "benign", "not_overfitting", "delayed"),
    fit_threshold: float = 1.0,
    test_threshold: float = 0.9,
    curves: pd.DataFrame | None = None,
    horizons: Sequence[int] = (),
) -> pd.DataFrame:
    """One row per (model, named setting): parameters, SNR, mean final metrics over seeds,
    the regime of the means and the per-seed regimes (theory.classify_regime thresholds).
    With ``curves``, also the logged step from which each seed's flipped labels are fitted
    (fraction >= fit_threshold): when noise fitting sets in, which a final-step label hides;
    and, per horizon in ``horizons`` up to the setting's training length, the fraction of seeds
    in each regime at that step (theory.regimes_at)."""
    runs = runs[runs["setting"].isin(settings)]
    rank = {**{m: i for i, m in enumerate(registry.MODELS)}, **{s: i for i, s in enumerate(settings)}}
    runs = runs.sort_values(["model", "setting"], key=lambda col: col.map(rank), kind="stable")
    metrics = ["train_loss", "test_loss", "train_acc", "test_acc", "train_acc_noisy"]
    table = seed_stats(runs, ["model", "setting"], metrics)
    params = ["d", "signal_norm", "n", "eta", "snr"]
    ok = runs[runs["status"] == "ok"].assign(
        _regime=lambda r: classify_regimes(r["train_acc_noisy"], r["test_acc"], fit_threshold, test_threshold)
    )
    rows = []
    for _, row in table.iterrows():
        group = runs[(runs["model"] == row["model"]) & (runs["setting"] == row["setting"])]
        ok_group = ok[(ok["model"] == row["model"]) & (ok["setting"] == row["setting"])]
        counts = ok_group["_regime"].fillna("none").value_counts()
        rows.append(
            {
                **{p: _single(group, p) for p in params},
                "flipped_fitted_from_step": _fit_steps(ok_group, curves, fit_threshold),
                "regime": classify_regime(
                    row["train_acc_noisy_mean"], row["test_acc_mean"], fit_threshold, test_threshold
                ),
                "seed_regimes": ", ".join(f"{k.replace('_', ' ')} ×{v}" for k, v in counts.items()),
                **_at_horizons(ok_group, curves, horizons, fit_threshold, test_threshold),
            }
        )
    table = pd.concat(
        [table[["model", "setting"]], pd.DataFrame(rows), table.drop(columns=["model", "setting"])], axis=1
    )
    display = pd.DataFrame(
        {
            "Model": table["model"].map(registry.label),
            "Setting": table["setting"].map(lambda s: SETTING_LABELS.get(s, s)),
            "d": table["d"],
            "‖μ‖": table["signal_norm"].map("{:g}".format),
            "n": table["n"],
            "η": table["eta"].map("{:g}".format),
            "SNR": table["snr"].map("{:.3f}".format),
            "Seeds": seeds_cell(table),
            "Train loss": table["train_loss_mean"].map(lambda v: num(v, 3)),
            "Test loss": table["test_loss_mean"].map(lambda v: num(v, 3)),
            "Train acc": table["train_acc_mean"].map(lambda v: num(v, 3)),
            "Test acc": table["test_acc_mean"].map(lambda v: num(v, 3)),
            "Flipped labels fitted": table["train_acc_noisy_mean"].map(lambda v: num(v, 3)),
            "Regime": table["regime"].map(lambda r: REGIME_LABELS.get(r, MISSING)),
            "Per seed": table["seed_regimes"],
            "Flipped labels fitted from step": table["flipped_fitted_from_step"],
        }
    )
    for h in horizons if curves is not None else ():
        display[f"Seeds' regimes at step {h}"] = table[f"regimes_at_{h}"]
    if curves is None:
        display = display.drop(columns="Flipped labels fitted from step")
    header = [
        "## Synthetic data: regimes of the named settings",
        f"Final metrics, mean over seeds with status ok. Regime: not overfitting if the flipped training labels "
        f"are not all fitted (fraction < {fit_threshold:g}), else benign if test accuracy ≥ {test_threshold:g}, "
        "else harmful. SNR = ‖μ‖ / (σ √d)."
        + (
            " Flipped labels fitted from step: the first logged step at which a seed's flipped labels are "
            f"fitted (fraction ≥ {fit_threshold:g}), the range over seeds, and how many seeds got there. "
            "Seeds' regimes at step h: the fraction of seeds in each regime, labelled at the last logged step up "
            "to h (a setting trained for fewer steps than h has none)."
            if curves is not None
            else ""
        ),
    ]
    write(table, display, header, stem)
    return table


def _fit_steps(ok_group: pd.DataFrame, curves: pd.DataFrame | None, fit_threshold: float) -> str:
    """'700–1000 (3 of 3 seeds)': the first logged step at which each run's flipped labels are
    fitted, over the group's runs; '' without curves."""
    if curves is None or ok_group.empty:
        return ""
    c = curves[curves["run_id"].isin(ok_group["run_id"])]
    reached = first_step_per_run(c, "train_acc_noisy", fit_threshold)
    total = ok_group["run_id"].nunique()
    if reached.empty:
        last = int(c["step"].max()) if len(c) else 0
        return f"never by step {last} (0 of {total} seeds)"
    lo, hi = int(reached.min()), int(reached.max())
    span = f"{lo}" if lo == hi else f"{lo}–{hi}"
    return f"{span} ({len(reached)} of {total} seeds)"


def _at_horizons(ok_group, curves, horizons, fit_threshold: float, test_threshold: float) -> dict:
    """{'regimes_at_<h>': 'benign 2/3, not overfitting 1/3'} per horizon h the runs reach."""
    out = {f"regimes_at_{h}": "" for h in horizons}
    if curves is None or ok_group.empty or not len(horizons):
        return out
    c = curves[curves["run_id"].isin(ok_group["run_id"])]
    steps = int(ok_group["steps"].max())
    reached = [h for h in horizons if h <= steps]
    if not reached:
        return out
    labels = regimes_at(c, reached, fit_threshold, test_threshold)
    total = ok_group["run_id"].nunique()
    for h, at in labels.groupby("horizon"):
        counts = at["regime"].fillna("none").value_counts()
        order = [r for r in (*REGIMES, "none") if r in counts]
        out[f"regimes_at_{h}"] = ", ".join(f"{r.replace('_', ' ')} {counts[r]}/{total}" for r in order)
    return out


def _single(group: pd.DataFrame, col: str):
    """The one value of ``col`` in a table row's runs; a row must not mix settings."""
    values = group[col].unique()
    if len(values) != 1:
        raise ValueError(f"runs of one table row disagree on {col}: {sorted(values)}")
    return values[0]
