"""The delay scan's cells (benign/analysis/delay_scan.py) on hand-made runs of three (T, ||mu||)
cells, two seeds each: the fit and generalization steps, r at the fit and at the horizon, and in
which order each seed meets the two."""

import pandas as pd
import pytest

from benign.analysis.delay_scan import scan_cells
from tests.helpers import frames


def scan_runs() -> tuple[pd.DataFrame, pd.DataFrame]:
    """(runs, curves): selection after the fit at (16, 10), before it at (16, 40), never at (4, 10)."""
    runs, rows = [], []
    # (T, ||mu||): (fit step, censored), (selection step, censored), r at logged steps 0, 10, 100, 1000
    cells = {
        (16, 10.0): ((10.0, False), (100.0, False), (1.0, 0.8, 0.4, 0.2)),  # selection after the fit
        (16, 40.0): ((100.0, False), (10.0, False), (1.0, 0.3, 0.1, 0.05)),  # selection before
        (4, 10.0): ((10.0, False), (1000.0, True), (1.0, 0.9, 0.8, 0.7)),  # never selects: censored
    }
    for (T, norm), ((fit, fit_c), (gen, gen_c), rs) in cells.items():
        for seed in (1, 2):
            rid = f"r-{T}-{norm}-{seed}"
            runs.append(dict(run_id=rid, T=T, signal_norm=norm, seed=seed, d=2000, steps=1000,
                             fit_noisy_step=fit, fit_noisy_censored=fit_c, generalized_step=gen,
                             generalized_censored=gen_c))  # fmt: skip
            rows += [dict(run_id=rid, step=s, test_loss_normalised=r, test_sel_relevant=1 - r)
                     for s, r in zip((0, 10, 100, 1000), rs)]  # fmt: skip
    return frames.runs(runs), pd.DataFrame(rows)


def test_each_cell_times_the_fit_and_the_selection_and_orders_them_per_seed():
    runs, curves = scan_runs()
    cells, horizon = scan_cells(runs, curves)
    cells = cells.set_index(["T", "signal_norm"])
    assert horizon == 1000
    after, before, never = cells.loc[(16, 10.0)], cells.loc[(16, 40.0)], cells.loc[(4, 10.0)]
    assert (after["fit_step_min"], after["gen_step_max"], after["selection_after_fit"]) == (10.0, 100.0, 2)
    assert after["r_at_fit"] == pytest.approx(0.8) and after["r_end"] == pytest.approx(0.2)
    assert (before["selection_before_fit"], before["selection_after_fit"], before["r_at_fit"]) == (2, 0, 0.1)
    assert (never["fitted"], never["selected"], never["fit_only"]) == (2, 0, 2) and never["r_end"] == pytest.approx(0.7)
    assert (cells["seeds"] == 2).all()
