"""Boundaries fitted to crossings (benign/analysis/crossings.py): the brackets of hand-made lines,
the interval likelihood against scipy's normal, and, on simulated crossings of the default
atlas's grid, which law wins, how often the intervals cover, and that runs along a line do not
count as independent."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from benign.analysis import boundaries, crossings
from benign.analysis.predictor import predict
from benign.tables.boundaries import fitted_model
from tests.helpers.atlas_sim import GRID, LINES, simulate


def line(norms, sides, d=1000.0, n=10, seed=1) -> pd.DataFrame:
    return pd.DataFrame({"d": d, "n": n, "seed": seed, "signal_norm": norms, "side": sides})


def test_brackets_of_hand_made_lines():
    cases = [
        (line([1, 2, 4, 8], [False, False, True, True]), (2.0, 4.0, "", 1)),
        (line([1, 2, 4, 8], [True, True, True, True]), (0.0, 1.0, "left", 0)),  # above throughout: below the first norm
        (line([1, 2, 4, 8], [False, False, False, False]), (8.0, math.inf, "right", 0)),  # the horizon kept, censored
        (line([1, 2, 4, 8, 16], [False, True, False, True, True]), (1.0, 8.0, "", 3)),  # every change inside
    ]
    for cells, (lower, upper, censored, changes) in cases:
        got = crossings.crossings(cells.sample(frac=1, random_state=0)).iloc[0]  # order of the runs does not matter
        assert (got["lower"], got["upper"], got["censored"], got["changes"]) == (lower, upper, censored, changes)


def test_interval_likelihood_matches_the_normal_distribution():
    lower = np.array([2.0, 0.0, 8.0, 1e-3, 5e4])
    upper = np.array([4.0, 1.0, np.inf, 2e-3, 6e4])
    mean, sigma = 1.0, 0.7
    direct = np.log(norm.cdf(np.log(upper), mean, sigma) - norm.cdf(np.log(np.maximum(lower, 1e-300)), mean, sigma))
    direct[2] = norm.logsf(np.log(8.0), mean, sigma)  # the far tails, where a difference of cdfs loses every digit
    direct[4] = np.log(norm.sf(np.log(5e4), mean, sigma) - norm.sf(np.log(6e4), mean, sigma))
    assert crossings.log_likelihood(lower, upper, mean, sigma) == pytest.approx(direct, rel=1e-9)


def test_a_known_power_law_is_recovered_with_its_scatter():
    rng = np.random.default_rng(3)
    fit = crossings.fit(crossings.crossings(simulate(rng, a=0.4, b=-0.3, seeds=6)), "power")
    assert fit.estimates["a"] == pytest.approx(0.4, abs=0.03)
    assert fit.estimates["b"] == pytest.approx(-0.3, abs=0.08)
    assert fit.sigma == pytest.approx(0.1, abs=0.04)
    assert fit.crossings == len(LINES) * 6


@pytest.mark.parametrize("truth, winner", [({"a": 0.25, "gamma": 1.0}, "theory"), ({"a": 0.4, "gamma": 0.0}, "power")])
def test_the_law_that_made_the_crossings_wins(truth, winner):
    """With a = 1/4 and a log factor, law (ii) wins; with a pure power a = 0.4, law (i) does: by AIC
    in 16 or more of 20 simulated atlases, and by the mean held-out log-likelihood over 8 of them of the default grid (3 seeds,
    as config/full.yaml; scatter 0.05 in log ||mu||, a quarter of a refined bracket)."""
    rng = np.random.default_rng(7)
    by_aic, held_out = 0, {"power": [], "theory": []}
    for draw in range(20):
        cr = crossings.crossings(simulate(rng, sigma=0.05, seeds=3, **truth))
        laws = {"power": None, "theory": {"a": 0.25}}
        fits = {law: crossings.fit(cr, law, fixed) for law, fixed in laws.items()}
        by_aic += min(fits, key=lambda law: fits[law].aic) == winner
        for law, fixed in laws.items():
            if draw < 8:  # leave-one-line-out refits every law 13 times: 8 atlases are enough for the mean
                held_out[law].append(crossings.held_out(cr, law, fixed))
    loser = ({"power", "theory"} - {winner}).pop()
    assert by_aic >= 16, by_aic
    assert np.mean(held_out[winner]) > np.mean(held_out[loser]), held_out


def test_intervals_cover_the_true_exponents():
    """The 95% intervals of a and b hold the true values in at least 90% of 200 simulated atlases."""
    rng = np.random.default_rng(11)
    hits = {"a": 0, "b": 0}
    for _ in range(200):
        fit = crossings.fit(crossings.crossings(simulate(rng, a=0.3, b=-0.2)), "power")
        for term, truth in (("a", 0.3), ("b", -0.2)):
            low, high = fit.intervals[term]
            hits[term] += low <= truth <= high
    assert hits["a"] >= 180 and hits["b"] >= 180, hits


def test_runs_along_a_line_are_not_independent():
    """Runs of a line share one crossing: resampling whole line-seeds, and counting crossings,
    give wider intervals of a than the run-level fit that counts every run."""
    rng = np.random.default_rng(5)
    cells = simulate(rng, a=0.3)
    k_max = boundaries.k_max_for(2**0.25)
    run_level = boundaries.fit(cells, "side", k_max).intervals["a"]
    by_line_seed = boundaries.line_seed_bootstrap(cells, "side", k_max, draws=200)["a"]
    by_crossing = crossings.fit(crossings.crossings(cells), "power").intervals["a"]
    width = {name: high - low for name, (low, high) in
             {"runs": run_level, "line-seeds": by_line_seed, "crossings": by_crossing}.items()}  # fmt: skip
    assert width["line-seeds"] > width["runs"] and width["crossings"] > width["runs"], width


def test_the_decade_slopes_follow_a_bend():
    """A law whose slope is 0.5 below d = 10^5 and 0.25 above: law (iii) finds both."""
    rng = np.random.default_rng(2)
    rows = []
    for d, n in LINES:
        for seed in range(4):
            log_star = 0.5 * math.log(min(d, 1e5)) + 0.25 * math.log(max(d / 1e5, 1.0)) - 3.0
            star = math.exp(log_star + 0.05 * rng.standard_normal())
            rows += [{"d": d, "n": n, "seed": seed, "signal_norm": x, "side": x > star}
                     for x in GRID + [star * 0.95, star * 1.05]]  # fmt: skip
    fit = crossings.fit(crossings.crossings(pd.DataFrame(rows)), "decades")
    assert fit.estimates["a[1e+3,1e+4]"] == pytest.approx(0.5, abs=0.08)
    assert fit.estimates["a[1e+6,1e+7]"] == pytest.approx(0.25, abs=0.08)
    low, high = fit.intervals["a[1e+6,1e+7]"]
    assert low <= 0.25 <= high


def test_the_predictors_intervals_cover_new_crossings_off_the_grid():
    """At settings inside the fitted range that no config uses, a new crossing falls in the
    predictor's 95% interval of ||mu||* in at least 90% of 200 simulated atlases."""
    rng = np.random.default_rng(13)
    hits = tries = 0
    for _ in range(200):
        cells = simulate(rng, a=0.3, b=-0.2, sigma=0.15)
        runs = cells.drop_duplicates(["d", "n", "seed", "signal_norm"]).reset_index(drop=True)
        runs["run_id"] = [f"r{i}" for i in range(len(runs))]
        # the argmax label never changes, so no law is fitted to it (the predictor reads the other two)
        labels = pd.DataFrame({"run_id": runs["run_id"], "horizon": 1000, "overfits": ~runs["side"],
                               "selects": runs["side"], "selects_argmax": True})  # fmt: skip
        model = fitted_model(runs.assign(setting="atlas", steps=1000), labels)
        d, n = float(rng.choice([3e3, 3e4, 3e5, 3e6])), float(rng.choice([14, 28]))
        star = 1.5 * d**0.3 * n**-0.2 * math.exp(0.15 * rng.standard_normal())
        _, low, high = predict(model, d=d, n=n, signal_norm=1.0, steps=1000)["boundaries"]["selection (harmful below)"]
        hits += low <= star <= high
        tries += 1
    assert hits >= 0.9 * tries, (hits, tries)
