"""The words an interval can carry (benign/analysis/equivalence.py), case by case: symmetric about
the margin, so "departs" needs as much of the interval as "agrees" does."""

import numpy as np
import pytest

from benign.analysis.equivalence import verdict


@pytest.mark.parametrize(
    "low, high, theory, words",
    [
        (0.22, 0.28, 0.25, "agrees"),  # the whole interval within 0.05 of the value
        (0.18, 0.28, 0.25, "cannot tell"),  # holds the value but reaches past the margin
        (0.31, 0.5, 0.25, "departs"),  # the whole interval beyond the margin
        (0.29, 0.5, 0.25, "cannot tell"),  # excludes the value but reaches inside the margin
        (-0.2, 0.19, 0.25, "departs"),  # below the margin, on the other side
        (-0.2, 0.21, 0.25, "cannot tell"),
        (
            0.26,
            0.29,
            0.25,
            "agrees",
        ),  # excludes the value but lies within the margin: equivalent, the margin says how close
        (-0.1, 0.4, 0.25, "cannot tell"),
        (-0.04, 0.03, 0.0, "agrees"),
        (np.nan, 0.4, 0.25, "cannot tell"),  # an open end can never lie within the margin
        (np.nan, 0.2, 0.25, "cannot tell"),
    ],
)
def test_words_follow_the_interval_and_its_margin(low, high, theory, words):
    assert verdict(low, high, theory, 0.05) == words
