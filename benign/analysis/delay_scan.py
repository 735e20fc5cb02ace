"""The delay scan's cells (docs/regimes.md#delay-scan): per (T, ||mu||) of the benign band, when
the flipped labels are fitted and when attention selects at test time, over the seeds, and in
which order each seed meets the two. benign.tables.delay_scan words them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign.analysis.milestones import order
from benign.analysis.theory import in_sweeps

ORDERS = ("selection after fit", "together", "selection before fit", "fit only", "selection only", "neither")


def scan_cells(runs: pd.DataFrame, curves: pd.DataFrame, sweep: str | None = None) -> tuple[pd.DataFrame, int]:
    """(one row per (T, ||mu||) cell of the scan's ok ``runs`` (annotated with milestones,
    benign.analysis.milestones.annotate), the horizon): the fit time (flipped labels fitted from
    then on) and the generalization time (attention selects at test time from then on), their
    ranges over seeds, the normalised test loss r when the labels are fitted and at the horizon,
    and how many seeds meet the two in each of ``ORDERS``."""
    if sweep is not None:  # the runs of that sweep among all of the model's
        runs = runs[in_sweeps(runs, [sweep])]
        curves = curves[curves["run_id"].isin(runs["run_id"])]
    runs = runs[runs["status"] == "ok"]
    if runs.empty:
        raise ValueError("the delay scan has no run with status ok")
    per_run = []
    for _, run in runs.iterrows():
        curve = curves[curves["run_id"] == run["run_id"]].sort_values("step").set_index("step")
        fit = np.nan if run["fit_noisy_censored"] else run["fit_noisy_step"]
        r_fit = float(curve.loc[curve.index <= fit, "test_loss_normalised"].iloc[-1]) if np.isfinite(fit) else np.nan
        per_run.append({"T": run["T"], "signal_norm": run["signal_norm"], "d": run["d"], "n": run["n"],
                        "fit_step": fit, "gen_step": np.nan if run["generalized_censored"] else run["generalized_step"],
                        "r_at_fit": r_fit, "r_end": float(curve["test_loss_normalised"].iloc[-1]),
                        "sel_end": float(curve["test_sel_relevant"].iloc[-1]), "order": order(run)})  # fmt: skip
    per_run = pd.DataFrame(per_run)
    group = per_run.groupby(["T", "signal_norm"])
    table = group.agg(
        d=("d", "first"), n=("n", "first"), seeds=("fit_step", "size"),
        fit_step_min=("fit_step", "min"), fit_step_max=("fit_step", "max"), fitted=("fit_step", "count"),
        gen_step_min=("gen_step", "min"), gen_step_max=("gen_step", "max"), selected=("gen_step", "count"),
        r_at_fit=("r_at_fit", "mean"), r_end=("r_end", "mean"), sel_end=("sel_end", "mean"),
    ).reset_index()  # fmt: skip
    for name in ORDERS:
        table[name.replace(" ", "_")] = group["order"].apply(lambda o, name=name: int((o == name).sum())).to_numpy()
    return table, int(runs["steps"].max())
