"""The limit's tables (benign.tables.limit), from a hand-made atlas with known shifts
(tests/analysis/test_limit.py)."""

import pandas as pd

from benign.tables import limit as limit_table
from tests.analysis.test_limit import CRITERIA, hand_atlas


def test_the_tables_state_the_atlas_setting_and_print_the_words_they_computed(tmp_path):
    runs, labels, limit = hand_atlas(plateau_shift=-0.4, twin_shift=-0.2, limit_shift=-0.3)
    curves = pd.DataFrame({"run_id": runs["run_id"], "step": 10**6, "train_acc_noisy": 1.0, "train_clean_sel_relevant": 1.0,
                           "train_noisy_sel_relevant": 0.0, "train_noisy_sel_weak_true": 0.0,
                           "train_noisy_sel_weak_opposite": 1.0, "train_noisy_sel_irrelevant": 0.0})  # fmt: skip
    selection = pd.DataFrame({"run_id": runs["run_id"], "clean_sel_relevant": 1.0, "noisy_sel_relevant": 0.0,
                              "noisy_sel_weak_true": 0.0, "noisy_sel_weak_opposite": 1.0, "noisy_sel_irrelevant": 0.0})  # fmt: skip
    fits = limit_table.boundary_limits(runs, labels, CRITERIA, limit, 0.05, tmp_path / "fits")
    cells = limit_table.limit_shifts(runs, curves, labels, CRITERIA, limit, selection, tmp_path / "cells")
    fits_md, cells_md = (tmp_path / "fits.md").read_text(), (tmp_path / "cells.md").read_text()
    for md in (fits_md, cells_md):
        assert "T 8; rho 0.1; eta 0.2; sigma 1; step_size 5; integrator flow" in md
    assert fits_md.count("further than the margin from its limit (±0.05)") == 2  # one a boundary, as computed
    assert len(pd.read_csv(tmp_path / "fits.csv")) == len(fits) == 2 * (5 + 4)
    assert len(pd.read_csv(tmp_path / "cells.csv")) == len(cells) == 2 * 3 * 6
    assert "4 of 4 (" in cells_md  # every line of a cell holds the global selection's kinds near its crossing
