"""The boundary fit recovers known laws from labels drawn on the default atlas grid, and its
intervals come from the data, not from the grid's spacing (benign/analysis/boundaries.py)."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from benign.analysis import boundaries
from benign.tables import boundaries as tables

ROOT = Path(__file__).resolve().parents[1]
K_MAX = boundaries.k_max_for(2 ** (1 / 8))


def default_grid() -> pd.DataFrame:
    """Every (d, n, ||mu||, seed) of the default config's atlas sweep."""
    sweep = yaml.safe_load((ROOT / "config/config.yaml").read_text())["synthetic"]["token"]["sweeps"]["atlas"]
    axes = sweep["axes"]
    rows = [(d, n, m, s) for d in axes["d"] for n in axes["n"] for m in axes["signal_norm"] for s in sweep["seeds"]]
    return pd.DataFrame(rows, columns=["d", "n", "signal_norm", "seed"])


def draw(runs: pd.DataFrame, c: float, a: float, b: float, k: float, seed: int = 0) -> pd.DataFrame:
    """Labels drawn from P(side) = sigmoid(k (log ||mu|| - log c - a log d - b log n))."""
    rng = np.random.default_rng(seed)
    z = k * (np.log(runs["signal_norm"]) - np.log(c) - a * np.log(runs["d"]) - b * np.log(runs["n"]))
    return runs.assign(side=rng.random(len(runs)) < 1 / (1 + np.exp(-z)))


@pytest.mark.parametrize("c, a, b, k", [(1.5, 0.25, 0.0, 5.0), (4.0, 0.5, -0.5, 4.0)])
def test_the_fit_recovers_a_known_law_within_its_interval(c, a, b, k):
    """Over 8 draws of labels from the law, each 95% interval holds the true value at least 6
    times (a 95% interval does so with probability 0.994; over 24 draws these held 22 to 24
    times), and the interval of a is narrow enough to say something (the coarse grid alone, 2
    seeds: the refined lines of a reproduction narrow it further)."""
    grid = default_grid()
    held = {name: 0 for name in ("a", "b", "c", "k")}
    for seed in range(8):
        fit = boundaries.fit(draw(grid, c, a, b, k, seed=seed), "side", K_MAX)
        for name, value in (("a", a), ("b", b), ("c", c), ("k", k)):
            low, high = fit.intervals[name]
            held[name] += low <= value <= high
        assert fit.intervals["a"][1] - fit.intervals["a"][0] < 0.4
    assert min(held.values()) >= 6, held


def test_separated_labels_give_an_interval_of_the_laws_that_keep_them_separated():
    """Every line flips between the same two grid norms (5 and 7): the midpoints-then-least-
    squares fit gave a = 0 with a zero-width interval. Here the profile is flat over every a
    that keeps the labels separated, |a| up to ln(7/5) / ln(d_max / d_min)."""
    runs = default_grid()
    runs = runs.assign(side=runs["signal_norm"] >= 7)
    fit = boundaries.fit(runs, "side", K_MAX)
    low, high = fit.intervals["a"]
    edge = np.log(7 / 5) / np.log(runs["d"].max() / runs["d"].min())
    assert fit.estimates["k"] == pytest.approx(K_MAX)  # at the cap: the labels are separated
    assert high - low > edge  # not zero: the data cannot tell these exponents apart
    assert -edge * 1.2 < low < 0 < high < edge * 1.2


def test_an_axis_with_one_value_is_not_fitted():
    runs = draw(default_grid().query("n == 12"), 1.5, 0.25, 0.0, 5.0)
    fit = boundaries.fit(runs, "side", K_MAX)
    assert fit.estimates["b"] is None and np.isnan(fit.intervals["b"][0])
    assert boundaries.fit(runs.assign(side=True), "side", K_MAX) is None  # no change, no boundary


def test_the_interaction_interval_holds_zero_for_a_product_law_and_the_true_term_otherwise():
    grid = default_grid()
    product = boundaries.fit(draw(grid, 4.0, 0.5, -0.5, 4.0), "side", K_MAX, interaction=True)
    low, high = product.intervals["e"]
    assert low <= 0 <= high
    # a law whose exponent of d grows with n: 1/4 at n = 17, from about 0 at n = 6 to 1/2 at n = 48
    exponent = 0.25 + 0.25 * (np.log(grid["n"]) - np.log(17))
    z = 6.0 * (np.log(grid["signal_norm"]) - exponent * np.log(grid["d"]))
    bent = grid.assign(side=np.random.default_rng(3).random(len(grid)) < 1 / (1 + np.exp(-z)))
    fit = boundaries.fit(bent, "side", K_MAX, interaction=True)
    low, high = fit.intervals["e"]
    assert low <= 0.25 <= high and high - low < 0.6  # the default grid resolves e only coarsely


def test_mu_star_interval_at_a_line_holds_the_true_boundary():
    held = 0
    for seed in range(100, 120):  # a 95% interval: at least 17 of 20 draws
        runs = draw(default_grid(), 1.5, 0.25, 0.0, 5.0, seed=seed)
        star, low, high = boundaries.mu_star_interval(runs, "side", K_MAX, 1800, 12)
        assert low < star < high
        held += low <= 1.5 * 1800**0.25 <= high
    assert held >= 17


def test_held_out_log_loss_beats_the_base_rate_where_there_is_a_law():
    runs = draw(default_grid(), 4.0, 0.5, -0.5, 4.0)
    p = runs["side"].mean()
    base = -(p * np.log(p) + (1 - p) * np.log(1 - p))
    assert boundaries.held_out_log_loss(runs, "side", K_MAX) < 0.6 * base
    truth = boundaries.held_out_log_loss(runs, "side", K_MAX, {"a": 0.5, "b": -0.5})
    wrong = boundaries.held_out_log_loss(runs, "side", K_MAX, {"a": 0.0, "b": 0.0})
    assert truth < wrong


@pytest.mark.parametrize(
    "low, high, theory, words",
    [
        (0.2, 0.3, 0.25, "agrees"),
        (0.3, 0.5, 0.25, "departs"),
        (-0.1, 0.4, 0.25, "cannot tell"),  # holds 0 as well: the law without d fits as well
        (-0.1, 0.1, 0.0, "agrees"),
        (np.nan, 0.4, 0.25, "cannot tell"),  # open
    ],
)
def test_words_follow_the_interval(low, high, theory, words):
    assert tables.verdict(low, high, theory) == words


def test_the_table_fits_each_boundary_at_each_horizon(tmp_path):
    grid = default_grid()
    grid["run_id"] = [f"r{i}" for i in range(len(grid))]
    frames = []
    for horizon in (1000, 10000):
        no = draw(grid, 4.0, 0.5, -0.5, 4.0, seed=horizon)["side"]
        sel = draw(grid, 1.5, 0.25, 0.0, 5.0, seed=horizon + 1)["side"]
        frames.append(pd.DataFrame({"run_id": grid["run_id"], "horizon": horizon, "overfits": ~no, "selects": sel}))
    labels = pd.concat(frames, ignore_index=True)
    table = tables.regime_boundaries(grid.assign(setting="atlas"), labels, tmp_path / "rb", "test", 2 ** (1 / 8))
    assert len(table) == 4 and set(table["runs"]) == {len(grid)}
    for row in table.itertuples():
        assert row.a == pytest.approx(row.theory_a, abs=0.15) and row.b == pytest.approx(row.theory_b, abs=0.15)
        assert row.a_low < row.a < row.a_high and row.b_low < row.b < row.b_high
        assert row.heldout_log_loss < row.base_log_loss
    md = (tmp_path / "rb.md").read_text()
    assert "profile-likelihood" in md and "agrees" in md
