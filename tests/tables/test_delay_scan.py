"""The delay scan's table (benign.tables.delay_scan) on the hand-made runs of
tests/analysis/test_delay_scan.py: does selection come after the fit?"""

import pytest

from tests.analysis.test_delay_scan import scan_runs


def test_delay_scan_says_whether_selection_comes_after_the_fit(tmp_path):
    from benign.tables import delay_scan as delay_tables

    runs, curves = scan_runs()
    table = delay_tables.delay_scan(runs, curves, tmp_path / "scan").set_index(["T", "signal_norm"])
    assert table.loc[(16, 10.0), "selection_after_fit"] == 2
    assert table.loc[(16, 40.0), "selection_before_fit"] == 2 and table.loc[(16, 40.0), "selection_after_fit"] == 0
    assert table.loc[(4, 10.0), "fit_only"] == 2 and table.loc[(4, 10.0), "selected"] == 0
    assert table.loc[(16, 10.0), "r_at_fit"] == pytest.approx(0.8)  # r at the fit step
    assert table.loc[(4, 10.0), "r_end"] == pytest.approx(0.7)
    md = (tmp_path / "scan.md").read_text()
    assert "In 2 of 6 runs selection arrives after" in md and "not by the horizon (0 of 2)" in md
