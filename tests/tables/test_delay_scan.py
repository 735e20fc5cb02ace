"""The delay scan's table (benign.tables.delay_scan, through benign.analysis.delay_scan): does
selection come after the fit?"""

import pandas as pd
import pytest

from tests.helpers import frames


def test_delay_scan_says_whether_selection_comes_after_the_fit(tmp_path):
    from benign.tables import delay_scan as delay_tables

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
    runs = frames.runs(runs)
    table = delay_tables.delay_scan(runs, pd.DataFrame(rows), tmp_path / "scan").set_index(["T", "signal_norm"])
    assert table.loc[(16, 10.0), "selection_after_fit"] == 2
    assert table.loc[(16, 40.0), "selection_before_fit"] == 2 and table.loc[(16, 40.0), "selection_after_fit"] == 0
    assert table.loc[(4, 10.0), "fit_only"] == 2 and table.loc[(4, 10.0), "selected"] == 0
    assert table.loc[(16, 10.0), "r_at_fit"] == pytest.approx(0.8)  # r at the fit step
    assert table.loc[(4, 10.0), "r_end"] == pytest.approx(0.7)
    md = (tmp_path / "scan.md").read_text()
    assert "In 2 of 6 runs selection arrives after" in md and "not by the horizon (0 of 2)" in md
