"""The delay-scan table: in the benign band, does attention come to select the relevant token at
test time only after the flipped labels are fitted (docs/regimes.md#delay-scan)?"""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign.analysis.milestones import order
from benign.analysis.theory import in_sweeps
from benign.synthetic import spec
from benign.tables.common import MISSING, PathLike, num, write

ORDERS = ("selection after fit", "together", "selection before fit", "fit only", "selection only", "neither")


def delay_scan(runs: pd.DataFrame, curves: pd.DataFrame, stem: PathLike, sweep: str | None = None) -> pd.DataFrame:
    """One row per (T, ||mu||) cell of the scan's ``runs`` (annotated with milestones,
    benign.analysis.milestones.annotate): the fit time (flipped labels fitted from then on) and the
    generalization time (attention selects at test time from then on), their ranges over seeds,
    the normalised test loss r when the labels are fitted and at the horizon, and how many seeds
    select after the fit, together with it, before it, or are censored."""
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
    horizon = int(runs["steps"].max())
    display = pd.DataFrame(
        {
            "T": table["T"],
            spec.SYMBOLS["signal_norm"]: table["signal_norm"].map("{:g}".format),
            "Flipped labels fitted from step": [_span(r, "fit_step", "fitted") for _, r in table.iterrows()],
            "Attention selects from step": [_span(r, "gen_step", "selected") for _, r in table.iterrows()],
            "r at the fit": table["r_at_fit"].map(lambda v: num(v, 3)),
            f"r at step {horizon}": table["r_end"].map(lambda v: num(v, 3)),
            f"Test selection rate at step {horizon}": table["sel_end"].map(lambda v: num(v, 3)),
            "Seeds: selection after / with / before the fit; censored": [
                f"{r.selection_after_fit} / {r.together} / {r.selection_before_fit}; "
                f"{r.fit_only + r.selection_only + r.neither}"
                for r in table.itertuples()
            ],
        }
    )
    after, total = int(table["selection_after_fit"].sum()), int(table["seeds"].sum())
    header = [
        "## Synthetic data: the delay scan",
        f"Runs in the benign band (d = {_values(table['d'])}, n = {_values(table['n'])}, horizon {horizon} steps): "
        "the fit time is the first logged step from which the flipped labels stay fitted, the generalization time the "
        "first from which attention selects the relevant token at test time (normalised test loss r at or under the "
        "label's threshold; docs/regimes.md#milestones). r = 1 is uniform attention, 0 one-hot on the relevant token. "
        "A time the horizon does not reach is censored: counted, never dropped. "
        f"In {after} of {total} runs selection arrives after the flipped labels are fitted.",
    ]
    write(table, display, header, stem)
    return table


def _span(row: pd.Series, column: str, count: str) -> str:
    got, seeds = int(row[count]), int(row["seeds"])
    if got == 0:
        return f"not by the horizon (0 of {seeds})"
    lo, hi = int(row[f"{column}_min"]), int(row[f"{column}_max"])
    return f"{lo if lo == hi else f'{lo}–{hi}'} ({got} of {seeds})"


def _values(column: pd.Series) -> str:
    return ", ".join(f"{v:g}" for v in sorted(column.unique())) if len(column) else MISSING
