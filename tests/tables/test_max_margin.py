"""The attention-SVM check's table (benign.tables.max_margin), its summary rows written and read
back (tests/analysis/test_max_margin.py)."""

import numpy as np
import pandas as pd
import pytest

from benign.analysis.max_margin import horizon_rows
from tests.analysis.test_max_margin import log


def test_the_table_writes_the_summary_rows_and_reads_them(tmp_path):
    """benign/tables/max_margin.py words what the summary computed: its CSV is the horizon rows,
    its Markdown has a row per horizon, the reading and the rate fits."""
    from benign.tables.max_margin import max_margin

    steps = np.unique(np.logspace(0, 4, 40).astype(int))
    frame = log(steps, 0.5 * np.log(steps.astype(float) + 1.0) ** -2.0)
    table = max_margin(frame, tmp_path / "mm", [100, 10000])
    pd.testing.assert_frame_equal(table, horizon_rows(frame, [100, 10000]))
    written = pd.read_csv(tmp_path / "mm.csv")
    assert list(written["horizon"]) == [100, 10000] and np.allclose(written["cosine"], table["cosine"])
    text = (tmp_path / "mm.md").read_text()
    assert "Reading: token_p_w0, theorem check" in text and "Rates of 1 - cos" in text
    with pytest.raises(ValueError, match="no runs"):
        max_margin(frame.iloc[:0], tmp_path / "none", [100])
