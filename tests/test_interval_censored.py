"""The interval-censored fit (benign/analysis/interval_censored.py, through
benign.analysis.crossings.fit) checked for coverage on simulated crossings of the atlas's design:
16 (d, n) lines, 8 seeds each on staggered factor-sqrt(2) brackets, a line effect and a seed's
own scatter. Its 95% intervals of a and b must cover the true exponents in about 95% of draws:
not one recovered value, the rate over many."""

import math

import numpy as np
import pandas as pd
import pytest

from benign.analysis import crossings
from benign.analysis import interval_censored as ic

CELLS = [(d, n) for d in (1e3, 1e4, 1e5, 1e6, 1e7) for n in (10, 20, 40, 80) if d >= 5 * n**2]
SEEDS = 8
STEP = math.log(2) / 2  # a seed's bracket: a factor sqrt(2), staggered by an eighth between seeds
A, B, C = 0.25, -0.25, 1.0


def draw(rng, line_sd: float, seed_sd: float) -> pd.DataFrame:
    """One atlas of crossings: ln ||mu||* = a ln d + b ln n + c + a line's effect + a seed's
    scatter, each known only as the bracket of its seed's grid that holds it."""
    rows = []
    for d, n in CELLS:
        line = rng.normal(0, line_sd)
        for seed in range(SEEDS):
            y = A * math.log(d) + B * math.log(n) + C + line + rng.normal(0, seed_sd)
            shift = seed / SEEDS * STEP
            k = math.floor((y - shift) / STEP)
            rows.append({"d": d, "n": n, "seed": seed, "lower": math.exp(shift + k * STEP),
                         "upper": math.exp(shift + (k + 1) * STEP), "censored": ""})  # fmt: skip
    return pd.DataFrame(rows)


def coverage(draws: int, line_sd: float, seed_sd: float, intervals) -> dict[str, float]:
    rng = np.random.default_rng(20261206)
    hits = {"a": 0, "b": 0}
    for _ in range(draws):
        fit = crossings.fit(draw(rng, line_sd, seed_sd), "power", intervals=intervals)
        for term, truth in (("a", A), ("b", B)):
            low, high = fit.intervals[term]
            hits[term] += low <= truth <= high
    return {term: count / draws for term, count in hits.items()}


@pytest.mark.slow  # 17 fits a draw
def test_the_jackknife_intervals_cover_at_about_their_level():
    """The default intervals (jackknife over lines + the grid's, t on G - 1), with a line
    effect: 95% within binomial error over 100 draws (sd 0.022; 0.88 is 3 sd below, and an
    interval that covered 80% would pass it in under 1% of draws)."""
    got = coverage(100, 0.03, 0.05, True)
    print(f"coverage (line sd 0.03, seed sd 0.05): {got}")
    assert all(0.88 <= rate for rate in got.values()), got


@pytest.mark.slow
def test_where_the_brackets_are_all_the_data_the_intervals_do_not_undercover():
    """Scatter far below the resolution (sigma at its floor): the grid's covariance keeps the
    intervals honest, at or above their level."""
    got = coverage(40, 0.0, 0.002, True)
    print(f"coverage at the floor: {got}")
    assert all(rate >= 0.90 for rate in got.values()), got


@pytest.mark.parametrize(("line_sd", "seed_sd"), [(0.03, 0.05), (0.0, 0.08)])
def test_the_clustered_sandwich_covers_near_its_level(line_sd, seed_sd):
    """The sandwich clustered by line (CR1, 16 clusters, t on G - 1), with and without a line
    effect: within binomial error of 95% over 120 draws (sd 0.02), never far below."""
    got = coverage(120, line_sd, seed_sd, "sandwich")
    print(f"coverage, sandwich (line sd {line_sd}, seed sd {seed_sd}): {got}")
    assert all(0.87 <= rate <= 1.0 for rate in got.values()), got


def test_the_maximum_likelihood_is_consistent_without_censoring_error():
    """With narrow brackets and many seeds, the estimates approach the truth and sigma the scatter."""
    rng = np.random.default_rng(1)
    rows = []
    for d, n in CELLS:
        for _ in range(200):
            y = A * math.log(d) + B * math.log(n) + C + rng.normal(0, 0.1)
            rows.append((d, n, math.exp(y - 1e-3), math.exp(y + 1e-3)))
    d, n, lower, upper = (np.array(col, dtype=float) for col in zip(*rows))
    X = np.column_stack([np.ones_like(d), np.log(d), np.log(n)])
    params = ic.maximise(X, np.zeros(len(d)), lower, upper, floor=1e-4)
    assert params[:3] == pytest.approx([C, A, B], abs=0.02)
    assert math.exp(params[3]) == pytest.approx(0.1, rel=0.05)
