"""Boundary fits recover known laws (benign/boundaries.py)."""

import numpy as np
import pandas as pd
import pytest

from benign.boundaries import bootstrap, power_law, transition


def labels_from_law(a, b, c, noise=0.08, seeds=5, rng=None):
    """Runs on a (d, n, ||mu||) grid labelled by a known transition ||mu||* = c d^a n^b, each
    seed's label blurred by logistic noise in log ||mu||."""
    rng = rng or np.random.default_rng(1)
    rows = []
    for d in (250, 500, 1000, 2000, 4000):
        for n in (10, 20, 40, 80):
            star = c * d**a * n**b
            for m in star * np.geomspace(0.25, 4.0, 25):
                for seed in range(seeds):
                    u = rng.uniform()
                    rows.append({"d": d, "n": n, "signal_norm": m, "seed": seed,
                                 "above": np.log(m / star) > noise * np.log(u / (1 - u))})  # fmt: skip
    return pd.DataFrame(rows)


def test_transition_of_cleanly_separated_labels_is_the_middle_of_the_gap():
    t = transition([1, 2, 4, 8, 16, 32], [0, 0, 0, 1, 1, 1])
    assert t.mu_star == pytest.approx(np.sqrt(4 * 8), rel=0.02) and t.steepness > 0
    down = transition([1, 2, 4, 8, 16, 32], [1, 1, 1, 0, 0, 0])
    assert down.mu_star == pytest.approx(np.sqrt(32), rel=0.02) and down.steepness < 0
    assert transition([1, 2, 4], [1, 1, 1]) is None  # nothing changes: no transition


def test_power_law_is_exact_on_exact_points():
    points = pd.DataFrame(
        [{"d": d, "n": n, "mu_star": 3.0 * d**0.5 * n**-0.5} for d in (100, 400, 900) for n in (10, 40)]
    )
    law = power_law(points)
    assert law.c == pytest.approx(3.0) and law.a == pytest.approx(0.5) and law.b == pytest.approx(-0.5)
    one_n = power_law(points[points.n == 10])
    assert one_n.b is None and one_n.a == pytest.approx(0.5)


def test_bootstrap_recovers_the_exponents_within_its_interval():
    runs = labels_from_law(a=0.5, b=-0.5, c=2.0)
    out = bootstrap(runs, "above", draws=60)
    assert out["a"][0] <= 0.5 <= out["a"][1] and out["b"][0] <= -0.5 <= out["b"][1]
    assert abs(out["fit"].a - 0.5) < 0.05 and abs(out["fit"].b + 0.5) < 0.05
    assert out["a"][1] - out["a"][0] < 0.1  # an interval that says something


def test_a_fitted_boundary_agrees_with_the_cells_on_its_side():
    from benign.boundaries import agreement

    runs = labels_from_law(a=0.5, b=-0.5, c=2.0)
    fit = bootstrap(runs, "above", draws=5)["fit"]
    share, cells = agreement(runs, "above", fit, above=True)
    assert cells > 100 and share >= 0.9
    below, _ = agreement(runs.assign(above=~runs["above"]), "above", fit, above=False)
    assert below >= 0.9  # the other side, labelled the other way


def test_the_table_says_where_a_power_law_does_not_describe_the_cells(tmp_path):
    from benign.tables import boundaries as tables

    good = labels_from_law(a=0.5, b=-0.5, c=2.0, seeds=3)
    bent = good.copy()  # one line's labels flipped above its transition: not one transition any more
    line = (bent["n"] == 10) & (bent["d"] >= 1000)
    bent.loc[line, "above"] = ~bent.loc[line, "above"]
    frames = []
    for horizon, runs in ((1000, bent), (10000, good)):
        frames.append(runs.assign(horizon=horizon, regime=np.where(runs["above"], "not_overfitting", "benign")))
    cells = pd.concat(frames, ignore_index=True)
    cells["run_id"] = [f"r{i}" for i in range(len(cells))]
    runs = cells[["run_id", "d", "n", "signal_norm", "seed"]].assign(setting="atlas")
    table = tables.regime_boundaries(runs, cells[["run_id", "horizon", "regime"]], tmp_path / "rb", "test", draws=3)
    share = table.set_index(["boundary", "horizon"])["agreement"]
    assert share[("not overfitting", 10000)] >= tables.AGREEMENT_LEVEL > share[("not overfitting", 1000)]
    header = (tmp_path / "rb.md").read_text().split("\n| ")[0]
    assert "does not describe the cells" in header and "not overfitting at 1000 steps" in header
    assert "at 10000 steps" not in header
