"""The delay-scan table: in the benign band, does attention come to select the relevant token at
test time only after the flipped labels are fitted (docs/regimes.md#delay-scan)?"""

from __future__ import annotations

import pandas as pd

from benign.analysis.delay_scan import scan_cells
from benign.synthetic import spec
from benign.tables.common import MISSING, PathLike, num, write


def delay_scan(runs: pd.DataFrame, curves: pd.DataFrame, stem: PathLike, sweep: str | None = None) -> pd.DataFrame:
    """One row per (T, ||mu||) cell of the scan's ``runs`` (benign.analysis.delay_scan.scan_cells:
    fit and generalization times over the seeds, r at the fit and at the horizon, and how many
    seeds select after the fit, together with it, before it, or are censored), worded and written."""
    table, horizon = scan_cells(runs, curves, sweep)
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
