"""The time-scale table: the atlas's runs at (lr, t) against the same runs at (k lr, t / k)
(benign.analysis.time_scale, docs/regimes.md#time-scale)."""

from __future__ import annotations

import pandas as pd

from benign.analysis.time_scale import AGREEMENT, largest_factor
from benign.tables.common import PathLike, num, write


def lr_time(table: pd.DataFrame, stem: PathLike, sweep: str, lr: float, steps: int) -> None:
    """``table`` (benign.analysis.time_scale.compare) as <stem>.csv and <stem>.md, with its verdict."""
    k = largest_factor(table)
    verdict = (
        f"The largest factor whose labels agree on at least {AGREEMENT:.0%} of the runs is k = {k}: long horizons "
        f"can be reached at {k} times the learning rate, and are reported in lr t."
        if k
        else f"No factor keeps the labels of {AGREEMENT:.0%} of the runs: horizons stay at the configured learning rate."
    )
    display = pd.DataFrame(
        {
            "k": table["k"],
            "Runs compared": table["runs"],
            "lr t": table["lr t"].map(lambda v: num(v, 3)),
            "Labels agree": table["labels_agree"].map(lambda v: f"{v:.1%}"),
            "Largest \\|Δr\\|": table["max_abs_delta_r"].map(lambda v: num(v, 3)),
            "Median \\|Δr\\|": table["median_abs_delta_r"].map(lambda v: num(v, 3)),
            f"Qualifies (≥ {AGREEMENT:.0%})": table["qualifies"].map({True: "yes", False: "no"}),
        }
    )
    header = [
        "# Time scale: (lr, t) against (k lr, t / k)",
        f"Every run of the sweep {sweep} (lr {lr:g}, {steps} steps) against the same run (data, seed, norm) at k times "
        "the learning rate for 1/k of the steps; the final regime label and the normalised test loss r compared.",
    ]
    write(table, display, header, stem, footer=[verdict])
