"""The atlas's boundary fits (benign/analysis/boundary_fits.py): the held-out word of law (i)
case by case; the fits on a simulated atlas are tested through their table
(tests/analysis/test_boundaries.py), the fitted model through the predictor (tests/analysis/test_crossings.py)."""

import numpy as np
import pytest

from benign.analysis import boundary_fits


@pytest.mark.parametrize(
    "gain, se, words",
    [(0.5, 0.1, "beats the base rate"), (0.1, 0.1, "no clear difference from the base rate"),
     (0.2, 0.095, "no clear difference from the base rate"),  # above 0 by 1.96 se, not by t(12)'s 2.18
     (-0.5, 0.1, "worse than the base rate"), (np.nan, 0.1, "not scored")],
)  # fmt: skip
def test_the_out_of_sample_word_follows_the_gains_interval(gain, se, words):
    assert boundary_fits.out_of_sample(gain, se, lines=13) == words
