"""The synthetic-data table: the named settings with their final metrics and regimes, and the
seeds' regimes at several horizons (a label depends on when a run is stopped)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from benign.analysis.metrics import first_step_per_run
from benign.analysis.theory import (
    REGIME_LABELS,
    REGIMES,
    Criteria,
    classify_regimes,
    head_acc_regimes,
    regimes_at,
    selects,
)
from benign.synthetic import registry, spec
from benign.tables.common import MISSING, PathLike, num, seed_stats, seeds_cell, write

SETTING_LABELS = {**REGIME_LABELS, "delayed": "Benign overfitting, long training"}


def synthetic_regimes(
    runs: pd.DataFrame,
    stem: PathLike,
    settings: Sequence[str] = (*REGIMES, "delayed"),  # the named settings, in the theory's order
    *,
    criteria: Criteria | dict,
    curves: pd.DataFrame | None = None,
    horizons: Sequence[int] = (),
) -> pd.DataFrame:
    """One row per (model, named setting): parameters, SNR, mean final metrics over seeds, what
    attention selects at test time, the regime of the means and the per-seed regimes
    (benign.analysis.theory.classify_regimes), beside the fixed head's accuracy label and the uniform-
    attention accuracy. With ``curves``, also the logged step from which each seed's flipped
    labels are fitted (fraction >= fit_threshold): when noise fitting sets in, which a final-step
    label hides; and, per horizon in ``horizons`` up to the setting's training length, the
    fraction of seeds in each regime at that step (theory.regimes_at)."""
    criteria = Criteria(**criteria) if isinstance(criteria, dict) else criteria  # synthetic.regime
    runs = runs[runs["setting"].isin(settings)]
    rank = {**{m: i for i, m in enumerate(registry.MODELS)}, **{s: i for i, s in enumerate(settings)}}
    runs = runs.sort_values(["model", "setting"], key=lambda col: col.map(rank), kind="stable")
    metrics = ["train_loss", "test_loss", "train_acc", "test_acc", "train_acc_noisy", "test_loss_normalised",
               "test_sel_relevant", "test_att_relevant", "test_acc_uniform"]  # fmt: skip
    table = seed_stats(runs, ["model", "setting"], metrics)
    ok = _labelled(runs, criteria)
    rows = [_setting_row(row, runs, ok, curves, horizons, criteria) for _, row in table.iterrows()]
    table = pd.concat(
        [table[["model", "setting"]], pd.DataFrame(rows), table.drop(columns=["model", "setting"])], axis=1
    )
    write(table, _display(table, curves, horizons), _header(criteria, curves), stem)
    return table


def _labelled(runs: pd.DataFrame, criteria: Criteria) -> pd.DataFrame:
    """The ok runs, with each run's regime, head-accuracy label and selection by r and by the rate."""
    return runs[runs["status"] == "ok"].assign(
        _regime=lambda r: classify_regimes(r["train_acc_noisy"], r["test_loss_normalised"], r["test_sel_relevant"],
                                           criteria),
        _head=lambda r: head_acc_regimes(r["train_acc_noisy"], r["test_acc"], criteria),
        _by_r=lambda r: selects(r["test_loss_normalised"], np.nan, criteria),
        _by_rate=lambda r: selects(np.nan, r["test_sel_relevant"], criteria),
    )  # fmt: skip


def _setting_row(row: pd.Series, runs: pd.DataFrame, ok: pd.DataFrame, curves, horizons, criteria: Criteria) -> dict:
    """The values of one (model, setting) row beside its seed statistics ``row``: its parameters,
    the regime of the means, the seeds' regimes and labels, and the fit step and horizons."""
    group = runs[(runs["model"] == row["model"]) & (runs["setting"] == row["setting"])]
    ok_group = ok[(ok["model"] == row["model"]) & (ok["setting"] == row["setting"])]
    has_r = bool(np.isfinite(ok_group["test_loss_normalised"].to_numpy(float)).any())
    return {
        **{p: _single(group, p) for p in ["d", "signal_norm", "n", "eta", "snr"]},
        "flipped_fitted_from_step": _fit_steps(ok_group, curves, criteria.fit_threshold),
        "regime": classify_regimes(
            row["train_acc_noisy_mean"], row["test_loss_normalised_mean"], row["test_sel_relevant_mean"], criteria
        ).item(),
        "seed_regimes": _counts(ok_group["_regime"]),
        "seed_head_acc_regimes": _counts(ok_group["_head"]),
        "selection_labels_agree": (
            f"{int((ok_group['_by_r'] == ok_group['_by_rate']).sum())} of {len(ok_group)}" if has_r else MISSING
        ),
        **_at_horizons(ok_group, curves, horizons, criteria),
    }


def _display(table: pd.DataFrame, curves, horizons) -> pd.DataFrame:
    """The table as the Markdown shows it."""
    three = lambda v: num(v, 3)  # noqa: E731
    display = pd.DataFrame(
        {
            "Model": table["model"].map(registry.label),
            "Setting": table["setting"].map(lambda s: SETTING_LABELS.get(s, s)),
            "d": table["d"],
            spec.SYMBOLS["signal_norm"]: table["signal_norm"].map("{:g}".format),
            "n": table["n"],
            spec.SYMBOLS["eta"]: table["eta"].map("{:g}".format),
            "SNR": table["snr"].map("{:.3f}".format),
            "Seeds": seeds_cell(table),
            "Train loss": table["train_loss_mean"].map(three),
            "Test loss": table["test_loss_mean"].map(three),
            "Train acc": table["train_acc_mean"].map(three),
            "Test acc": table["test_acc_mean"].map(three),
            "Flipped labels fitted": table["train_acc_noisy_mean"].map(three),
            "Test r (normalised loss)": table["test_loss_normalised_mean"].map(three),
            "Test selection rate": table["test_sel_relevant_mean"].map(three),
            "Regime": table["regime"].map(lambda r: REGIME_LABELS.get(r, MISSING)),
            "Per seed": table["seed_regimes"],
            "r and rate labels agree": table["selection_labels_agree"],
            "Test acc, uniform attention": table["test_acc_uniform_mean"].map(three),
            "Head-accuracy label per seed": table["seed_head_acc_regimes"],
            "Flipped labels fitted from step": table["flipped_fitted_from_step"],
        }
    )
    for h in horizons if curves is not None else ():
        display[f"Seeds' regimes at step {h}"] = table[f"regimes_at_{h}"]
    if curves is None:
        display = display.drop(columns="Flipped labels fitted from step")
    return display


def _header(criteria: Criteria, curves) -> list[str]:
    """The Markdown's heading and its note: how the regimes are read."""
    return [
        "## Synthetic data: regimes of the named settings",
        "Final metrics, mean over seeds with status ok. The regime is read from what attention selects "
        f"(docs/regimes.md#labels): not overfitting if under a fraction {criteria.fit_threshold:g} of the flipped "
        "training labels is fitted; else benign if attention selects the relevant token at test time, the "
        f"normalised test loss r = (L - L_sel) / (L_unif - L_sel) at most {criteria.loss_threshold:g} (1: uniform "
        "attention, 0: one-hot on the relevant token; for a model without a fixed head, the test selection rate at "
        f"least {criteria.rate_threshold:g}), else harmful. Test selection rate: the fraction of test samples whose "
        "most-attended token is the relevant one; 'r and rate labels agree': the seeds where the rate at the same "
        "threshold gives the same selection label. The head-accuracy label (benign if the fixed head's test "
        f"accuracy is at least {criteria.head_acc_threshold:g}) is shown for what it measures: under uniform "
        "attention that accuracy is Phi(‖μ‖ / (σ √(2T))) whatever d and n, beside it. SNR = ‖μ‖ / (σ √d)."
        + (
            " Flipped labels fitted from step: the first logged step at which a seed's flipped labels are "
            f"fitted (fraction ≥ {criteria.fit_threshold:g}), the range over seeds, and how many seeds got there. "
            "Seeds' regimes at step h: the fraction of seeds in each regime, labelled at the last logged step up "
            "to h (a setting trained for fewer steps than h has none)."
            if curves is not None
            else ""
        ),
    ]


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


def _counts(labels: pd.Series) -> str:
    """'benign ×2, harmful ×1'."""
    return ", ".join(f"{k.replace('_', ' ')} ×{v}" for k, v in labels.fillna("none").value_counts().items())


def _at_horizons(ok_group, curves, horizons, criteria: Criteria) -> dict:
    """{'regimes_at_<h>': 'benign 2/3, not overfitting 1/3'} per horizon h the runs reach."""
    out = {f"regimes_at_{h}": "" for h in horizons}
    if curves is None or ok_group.empty or not len(horizons):
        return out
    c = curves[curves["run_id"].isin(ok_group["run_id"])]
    steps = int(ok_group["steps"].max())
    reached = [h for h in horizons if h <= steps]
    if not reached:
        return out
    labels = regimes_at(c, reached, criteria)
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
