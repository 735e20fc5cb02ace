"""The delay-scan table: where test accuracy starts low and rises only after the training set is
fitted (docs/regimes.md#delay-scan)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign.milestones import test_rise
from benign.tables.common import PathLike, num, write


def delay_scan(runs: pd.DataFrame, curves: pd.DataFrame, stem: PathLike, rise: float = 0.1,
               test_threshold: float = 0.9) -> pd.DataFrame:  # fmt: skip
    """One row per (T, ||mu||) cell of the scan's ``runs`` (annotated with milestones,
    benign.milestones.annotate): the uniform-attention SNR ||mu|| / sqrt(2T) that the fixed head
    sees at step 0, mean test accuracy at step 0, when the training set is fitted and at the
    horizon, the fit step's range over seeds, and how many seeds start under
    ``test_threshold`` and rise by ``rise`` after the fit (benign.milestones.test_rise)."""
    runs = runs[runs["status"] == "ok"]
    if runs.empty:
        raise ValueError("the delay scan has no run with status ok")
    per_run = []
    for _, run in runs.iterrows():
        curve = curves[curves["run_id"] == run["run_id"]]
        fit = np.nan if run["fit_all_censored"] else run["fit_all_step"]
        per_run.append({"T": run["T"], "signal_norm": run["signal_norm"], "d": run["d"], "n": run["n"],
                        "fit_step": fit, **test_rise(curve, fit, rise, test_threshold)})  # fmt: skip
    per_run = pd.DataFrame(per_run)
    group = per_run.groupby(["T", "signal_norm"])
    table = group.agg(
        d=("d", "first"),
        n=("n", "first"),
        seeds=("fit_step", "size"),
        test_acc_start=("test_acc_start", "mean"),
        test_acc_at_fit=("test_acc_at_fit", "mean"),
        test_acc_end=("test_acc_end", "mean"),
        fit_step_min=("fit_step", "min"),
        fit_step_max=("fit_step", "max"),
        fitted=("fit_step", "count"),
        rises_after_fit=("rises_after_fit", "sum"),
    ).reset_index()
    table.insert(2, "uniform_snr", table["signal_norm"] / np.sqrt(2 * table["T"]))
    horizon = int(runs["steps"].max())
    display = pd.DataFrame(
        {
            "T": table["T"],
            "‖μ‖": table["signal_norm"].map("{:g}".format),
            "‖μ‖ / √(2T)": table["uniform_snr"].map("{:.2f}".format),
            "Test acc at step 0": table["test_acc_start"].map(lambda v: num(v, 3)),
            "Training set fitted at step": [_span(r) for _, r in table.iterrows()],
            "Test acc then": table["test_acc_at_fit"].map(lambda v: num(v, 3)),
            f"Test acc at step {horizon}": table["test_acc_end"].map(lambda v: num(v, 3)),
            "Seeds rising after the fit": [f"{r.rises_after_fit} of {r.seeds}" for r in table.itertuples()],
        }
    )
    found = int((table["rises_after_fit"] > 0).sum())
    header = [
        "## Synthetic data: the delay scan",
        f"Where the test accuracy starts low and rises only after the training set is fitted. At step 0 the "
        f"attention is uniform and the fixed head classifies the mean token, whose SNR is about ‖μ‖ / √(2T), so the "
        f"scan grows T and lowers ‖μ‖ (d = {_values(table['d'])}, n = {_values(table['n'])}, horizon {horizon} steps, "
        f"mean over seeds). A seed rises after the fit when its test accuracy is under {test_threshold:g} at step 0, "
        f"up by at least {rise:g} at the horizon, and less than half-way there when the training set is first fitted. "
        + (
            f"{found} of {len(table)} cells have such a seed."
            if found
            else "No cell of the scan has such a seed: within this scan the delayed rise is not seen."
        ),
    ]
    write(table, display, header, stem)
    return table


def _span(row: pd.Series) -> str:
    fitted, seeds = int(row["fitted"]), int(row["seeds"])
    if fitted == 0:
        return f"never (0 of {seeds} seeds)"
    lo, hi = int(row["fit_step_min"]), int(row["fit_step_max"])
    return f"{lo if lo == hi else f'{lo}–{hi}'} ({fitted} of {seeds} seeds)"


def _values(column: pd.Series) -> str:
    return ", ".join(f"{v:g}" for v in sorted(column.unique()))
