"""Boundaries fitted to crossings (benign/analysis/crossings.py): the brackets of hand-made lines,
the interval likelihood against scipy's normal, and, on simulated atlases with the default's
structure (tests/helpers/atlas_sim.py: independent lines, a shared miss per (d, n), the coarse
grid and its SNR range, the staggered 8-seed windows, censoring), which law wins, how often the
intervals cover, and that runs along a line do not count as independent."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from benign.analysis import boundaries, crossings
from benign.analysis.boundary_fits import fitted_model
from benign.analysis.predictor import predict
from tests.helpers.atlas_sim import LINES, NORMS, REFINED, simulate


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
    fit = crossings.fit(crossings.crossings(simulate(rng, a=0.4, b=-0.3, sigma=0.1, tau=0.0)), "power")
    assert fit.estimates["a"] == pytest.approx(0.4, abs=0.03)
    assert fit.estimates["b"] == pytest.approx(-0.3, abs=0.08)
    assert fit.sigma == pytest.approx(0.1, abs=0.04)
    assert fit.crossings == len(LINES) * len(REFINED) and fit.lines == len(LINES)


def test_the_floor_is_the_resolution_of_a_lines_staggered_seeds():
    """4 seeds at offsets k/4 of a factor-sqrt(2) step: a line's crossing is placed to an 8th of a
    factor 2, and sigma's floor is that over sqrt(12)."""
    cr = crossings.crossings(simulate(np.random.default_rng(4), sigma=0.0, tau=0.0))
    assert crossings.line_resolution(cr) == pytest.approx(math.log(2) / 8, rel=1e-6)
    assert crossings.sigma_floor(cr) == pytest.approx(math.log(2) / 8 / math.sqrt(12), rel=1e-6)


@pytest.mark.parametrize("truth, winner", [({"a": 0.25, "gamma": 1.0}, "theory"), ({"a": 0.4, "gamma": 0.0}, "power")])
def test_the_law_that_made_the_crossings_wins(truth, winner):
    """With a = 1/4 and a log factor, law (ii) wins; with a pure power a = 0.4, law (i) does: by AIC
    in 16 or more of 20 simulated atlases, and by the mean held-out log-likelihood over 8 of them."""
    rng = np.random.default_rng(7)
    by_aic, held_out = 0, {"power": [], "theory": []}
    for draw in range(20):
        cr = crossings.crossings(simulate(rng, sigma=0.05, tau=0.0, **truth))
        laws = {"power": None, "theory": {"a": 0.25}}
        fits = {law: crossings.fit(cr, law, fixed, intervals=False) for law, fixed in laws.items()}
        by_aic += min(fits, key=lambda law: fits[law].aic) == winner
        for law, fixed in laws.items():
            if draw < 8:  # leave-one-line-out refits every law 13 times: 8 atlases are enough for the mean
                held_out[law].append(np.mean(crossings.held_out_scores(cr, law, fixed)))
    loser = ({"power", "theory"} - {winner}).pop()
    assert by_aic >= 16, by_aic
    assert np.mean(held_out[winner]) > np.mean(held_out[loser]), held_out


def _coverage(sigma: float, tau: float, draws: int, capsys) -> tuple[dict, int]:
    """How many of ``draws`` simulated atlases (a 0.3, b -0.2, seed 11) have a and b inside their
    95% intervals; printed."""
    rng = np.random.default_rng(11)
    hits = {"a": 0, "b": 0}
    for _ in range(draws):
        fit = crossings.fit(crossings.crossings(simulate(rng, a=0.3, b=-0.2, sigma=sigma, tau=tau)), "power")
        for term, truth in (("a", 0.3), ("b", -0.2)):
            low, high = fit.intervals[term]
            hits[term] += low <= truth <= high
    with capsys.disabled():
        print(f"\n[crossings] coverage of 95% intervals, sigma {sigma}, tau {tau}, {draws} atlases: "
              + ", ".join(f"{t} {h / draws:.1%}" for t, h in hits.items()))  # fmt: skip
    return hits, draws


@pytest.mark.slow  # 150 fits of 17 each: beside the end-to-end tests, which mostly wait
@pytest.mark.parametrize(
    "sigma, tau, most",
    [
        (0.02, 0.05, 0.98),  # the atlas's own case: seeds that share a bracket, a law that misses each (d, n) a little
        (0.03, 0.1, 0.98),
        (0.1, 0.0, 1.0),  # seeds that scatter about an exact law: the jackknife is conservative there
    ],
)
def test_intervals_cover_the_true_exponents(sigma, tau, most, capsys):
    """The 95% intervals of a and b (the delete-one-line jackknife's variance plus the grid's,
    Student's t on G - 1) hold the true values in 90% to 98% of 150 simulated atlases with the
    default's structure (shared misses per (d, n), the grid, the staggered windows, the censoring
    outside them), and in at least 90% where the seeds' scatter alone makes the crossings vary."""
    hits, draws = _coverage(sigma, tau, 150, capsys)
    assert all(0.90 * draws <= h <= most * draws for h in hits.values()), hits


@pytest.mark.slow
def test_intervals_cover_where_the_grid_is_coarser_than_the_scatter(capsys):
    """The atlas's own regime: seeds' scatter 1% and the law's miss per (d, n) 1%, both below a
    line's resolution (ln 2 / 8, about 8.7%), so sigma mostly sits at its floor and a line's
    crossing is known only to its bracket. The 95% intervals of a and b (the jackknife's variance
    and the grid's) hold the true values in at least 93% of 400 simulated atlases: the binomial
    standard error near 93% is 1.3 points, so 400 draws tell 93% from 89% by 3 of them. The
    jackknife's variance alone covers b in about 92% there."""
    hits, draws = _coverage(0.01, 0.01, 400, capsys)
    assert all(h >= 0.93 * draws for h in hits.values()), hits


def test_runs_along_a_line_are_not_independent():
    """Runs of a line share one crossing, and the seeds of a (d, n) share what the law misses
    there: the crossings' fit, whose intervals count lines, gives a wider interval of a than the
    run-level fit that counts every run."""
    rng = np.random.default_rng(5)
    cells = simulate(rng, a=0.3, sigma=0.02, tau=0.1)
    run_level = boundaries.fit(cells, "side", boundaries.k_max_for(2 ** (1 / 8))).intervals["a"]
    by_line = crossings.fit(crossings.crossings(cells), "power").intervals["a"]
    assert by_line[1] - by_line[0] > 1.5 * (run_level[1] - run_level[0]), (by_line, run_level)


def test_the_decade_slopes_follow_a_bend():
    """A law whose slope is 0.5 below d = 10^5 and 0.25 above: law (iii) finds both."""
    rng = np.random.default_rng(2)
    rows = []
    for d, n in LINES:
        for seed in range(4):
            log_star = 0.5 * math.log(min(d, 1e5)) + 0.25 * math.log(max(d / 1e5, 1.0)) - 3.0
            star = math.exp(log_star + 0.05 * rng.standard_normal())
            rows += [{"d": d, "n": n, "seed": seed, "signal_norm": x, "side": x > star}
                     for x in NORMS + [star * 0.95, star * 1.05]]  # fmt: skip
    fit = crossings.fit(crossings.crossings(pd.DataFrame(rows)), "decades")
    assert fit.estimates["a[1e+3,1e+4]"] == pytest.approx(0.5, abs=0.08)
    assert fit.estimates["a[1e+6,1e+7]"] == pytest.approx(0.25, abs=0.08)
    low, high = fit.intervals["a[1e+6,1e+7]"]
    assert low <= 0.25 <= high


def test_the_predictors_intervals_cover_new_crossings_off_the_grid():
    """At settings inside the fitted range that no config uses, a new crossing (its own line:
    the law's miss there and a seed's scatter) falls in the predictor's 95% interval of ||mu||*
    in at least 90% of 100 simulated atlases, and the predictor names the lr and steps to train
    such a run at."""
    rng = np.random.default_rng(13)
    hits = tries = 0
    sigma, tau = 0.05, 0.05
    for _ in range(100):
        cells = simulate(rng, a=0.3, b=-0.2, sigma=sigma, tau=tau)
        runs = cells.drop_duplicates(["d", "n", "seed", "signal_norm"]).reset_index(drop=True)
        runs["run_id"] = [f"r{i}" for i in range(len(runs))]
        labels = pd.DataFrame({"run_id": runs["run_id"], "horizon": 1000, "overfits": ~runs["side"],
                               "selects": runs["side"], "selects_argmax": True, "selects_hardmax": True})  # fmt: skip
        model = fitted_model(runs.assign(setting="atlas", steps=1000, step_size=5.0, sigma=1.0), labels)
        d, n = float(rng.choice([3e3, 3e4, 3e5, 3e6])), float(rng.choice([14, 28]))
        star = 1.5 * d**0.3 * n**-0.2 * math.exp(tau * rng.standard_normal() + sigma * rng.standard_normal())
        out = predict(model, d=d, n=n, signal_norm=1.0, steps=1000)
        _, low, high = out["boundaries"]["selection (harmful below)"]
        assert out["lr"] == pytest.approx(5.0 / d) and out["steps"] == 1000 and out["time"] == 5000
        hits += low <= star <= high
        tries += 1
    assert hits >= 0.9 * tries, (hits, tries)


@pytest.mark.parametrize("law", ["power", "decades"])
def test_the_jackknife_refits_are_the_fits_without_each_line(law):
    """The jackknife's refits, which slice one design and one set of line gaps, are the whole fits
    of the crossings without each (d, n) line in turn (each with its own design, sigma floor and
    terms; the decade only the left-out line spans has no refit): equal, not close."""
    cr = crossings.crossings(simulate(np.random.default_rng(17), a=0.3, b=-0.2, sigma=0.05, tau=0.05))
    cr = cr[~((cr["d"] == cr["d"].max()) & (cr["n"] != cr["n"].min()))]  # the top decade spanned by one line
    whole = crossings.fit(cr, law)
    groups = cr.groupby(["d", "n"]).ngroup().to_numpy()
    expected = []
    for g in np.unique(groups):
        f = crossings.fit(cr[groups != g], law, knots=whole.knots, intervals=False)
        expected.append([f.estimates.get(t, np.nan) for t in whole.estimates])
    got = crossings._jackknife_refits(cr, groups, crossings._line_gaps(cr), law, {}, whole.knots, list(whole.estimates))
    np.testing.assert_array_equal(got, np.array(expected))
    assert np.isnan(got).any() == (law == "decades") and np.isfinite(got).any()
