"""The large-step regime: where one gradient step at the paper's fixed lr already fits the
flipped labels (docs/regimes.md#the-one-step-regime)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benign.analysis.one_step import one_step_cells, one_step_map
from benign.analysis.theory import Criteria
from benign.tables.common import MISSING, PathLike, write


def one_step_regime(runs: pd.DataFrame, curves: pd.DataFrame, sweep: str, criteria: Criteria | dict,
                    stem: PathLike) -> pd.DataFrame:  # fmt: skip
    """One row per (n, ||mu||): the least d from which the first step fits the flipped labels on
    at least half of the seeds at that d and every larger one (the one-step d*), the step size
    lr sigma^2 d* and the SNR there, with SNR sqrt(n) (the scale of Magen et al.'s two-step
    regime), and the share fitted at the largest d."""
    table = one_step_map(one_step_cells(runs, curves, sweep, criteria))
    cell = lambda v, f: f.format(v) if np.isfinite(v) else MISSING  # noqa: E731
    display = pd.DataFrame(
        {
            "n": table["n"],
            "||mu||": table["signal_norm"].map(lambda v: f"{v:g}"),
            "one-step d* (first step fits)": [
                cell(v, "{:.3g}") if np.isfinite(v) else f"none up to {m:g}"
                for v, m in zip(table["d_star"], table["d_max"])
            ],  # fmt: skip
            "step size lr sigma^2 d*": table["step_size_star"].map(lambda v: cell(v, "{:.3g}")),
            "SNR at d*": table["snr_star"].map(lambda v: cell(v, "{:.3g}")),
            "SNR sqrt(n) at d*": table["snr_sqrt_n_star"].map(lambda v: cell(v, "{:.3g}")),
            "flipped labels fitted by step 1 at the largest d": table["fitted_at_d_max"].map(
                lambda v: cell(v, "{:.2f}")
            ),
        }
    )
    lr = table["lr"].iloc[0] if len(table) else np.nan
    header = [
        "## Synthetic data: the one-step regime of the paper's fixed learning rate",
        f"One gradient step at lr {lr:g} (the paper's) from the paper's initialisation (p = 0), over d, n and ||mu||, "
        f"{int(table['seeds'].min()) if len(table) else 0} seeds each. d* is the least d from which the first step "
        "fits at least the fraction fit_threshold of the flipped labels, not so fitted at initialisation, on at least "
        "half of the seeds, at that d and every larger one: past it, a run at this lr is a one-step jump, not the "
        "small-step dynamics of the theorem. At a weak signal the fixed head fits some flipped labels by chance before "
        "any step: such seeds do not count, and the last column says how many there were. "
        "The step size lr sigma^2 d grows with d; the atlas holds it at a fixed value instead "
        "(docs/regimes.md#step-size). SNR sqrt(n) compares with Magen et al. (2024), whose two large steps overfit "
        "benignly at SNR of order 1/sqrt(n).",
    ]
    write(table, display, header, stem)
    return table
