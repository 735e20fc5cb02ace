"""The exponents of n table (benign.tables.n_laws), from a simulated atlas with a known b
(tests/analysis/test_n_law.py)."""

import numpy as np

from benign.analysis import n_law
from benign.tables.n_laws import n_laws
from tests.analysis.test_n_law import CRITERIA, simulated_atlas


def test_the_table_words_where_each_value_lies(tmp_path):
    """The Markdown says the first step's -1/4 lies inside the selection labels' interval, the
    theorem's 0 outside; the CSV has a row per boundary and the samples' row."""
    runs, labels = simulated_atlas(np.random.default_rng(5), spread=0.3)
    table = n_laws(runs, labels, CRITERIA, tmp_path / "n_laws")
    assert list(table["boundary"]) == ["not overfitting", n_law.SAMPLES, "selection (harmful below)",
                                       "argmax selection", "hard-max selection"]  # fmt: skip
    md = (tmp_path / "n_laws.md").read_text()
    hardmax = next(line for line in md.splitlines() if line.startswith("| hard-max selection"))
    assert "| 0: outside |" in hardmax and "| inside |" in hardmax, hardmax
    assert "0.90 of a decade" in md
