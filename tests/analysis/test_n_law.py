"""The exponent of n (benign/analysis/n_law.py; its table: tests/tables/test_n_laws.py): normal order statistics
against their known values, the flipped samples' crossings of hand-made lines, the local slopes of
a bent law, and, on simulated atlases whose flipped samples cross independently about a law, the
order statistic's share of the not-overfitting label's b: predicted where the samples spread, none
where they do not."""

import math

import numpy as np
import pandas as pd
import pytest

from benign.analysis import crossings, n_law
from benign.analysis.boundaries import side_labels
from benign.analysis.theory import Criteria

CRITERIA = Criteria(fit_threshold=0.5, loss_threshold=0.1, rate_threshold=0.5, head_acc_threshold=0.9,
                    hardmax_threshold=0.1)  # fmt: skip


@pytest.mark.parametrize(
    "j, k, value",
    # tabulated expected normal order statistics (Harter 1961), largest first
    [(1, 2, 1 / math.sqrt(math.pi)), (1, 4, 1.0294), (2, 4, 0.2970), (4, 8, 0.1525), (1, 8, 1.4236), (3, 3, -0.8463)],
)
def test_expected_order_statistics_match_the_tables(j, k, value):
    assert n_law.expected_order_statistic(j, k) == pytest.approx(value, abs=2e-4)


def test_the_label_crosses_at_its_rank_of_the_flipped_samples():
    """At least half of k fitted: the largest of 2, the 2nd of 4, the 4th of 8, the 8th of 16."""
    assert [n_law.label_rank(k, CRITERIA) for k in (2, 4, 8, 16, 5)] == [1, 2, 4, 8, 3]


def _line(stars, norms, d=1e4, n=20, seed=1, horizon=100):
    """runs and labels of one line whose flipped samples stop being fitted above ``stars``."""
    stars = np.asarray(stars, dtype=float)
    runs = pd.DataFrame({"run_id": [f"{d}-{n}-{seed}-{m}" for m in norms], "d": d, "n": n, "seed": seed,
                         "signal_norm": norms, "n_noisy": len(stars)})  # fmt: skip
    fit = np.array([(stars > m).mean() for m in norms])
    labels = pd.DataFrame({"run_id": runs["run_id"], "horizon": horizon, "fit_noisy": fit,
                           "overfits": fit >= CRITERIA.fit_threshold})  # fmt: skip
    return runs, labels


def test_each_flipped_samples_crossing_is_bracketed_and_the_labels_is_its_rank():
    norms = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
    runs, labels = _line([3.0, 5.0, 12.0, 20.0], norms)
    cr = n_law.sample_crossings(labels, runs).sort_values("rank")
    # the j-th largest crossing: 20 in (16, 32), 12 in (8, 16), 5 in (4, 8), 3 in (2, 4)
    assert cr[["lower", "upper"]].to_numpy().tolist() == [[16, 32], [8, 16], [4, 8], [2, 4]]
    assert (cr["k"] == 4).all()
    label = crossings.crossings(side_labels(labels, runs, "overfits", True))
    rank = n_law.label_rank(4, CRITERIA)
    assert (
        label[["lower", "upper"]].to_numpy().tolist() == cr[cr["rank"] == rank][["lower", "upper"]].to_numpy().tolist()
    )


def test_the_spread_of_a_lines_samples_is_read_from_its_brackets():
    norms = list(np.exp(np.arange(-3, 3, 0.01)))
    stars = np.exp([-1.0, 0.0, 1.0])  # sample standard deviation 1 in ln
    runs, labels = _line(stars, norms)
    assert n_law.within_line_spread(n_law.sample_crossings(labels, runs)) == pytest.approx(1.0, abs=0.02)


def simulated_atlas(rng, spread, b=-0.5, tau=0.03, seeds=(1, 2, 3, 4), step=2 ** (1 / 8)):
    """A simulated atlas: on each (d, n, seed) line, k = n / 5 flipped samples whose crossings are
    c d^(1/2) n^b e^(tau u) e^(spread z) (u per (d, n), z per sample); selection labels crossing at
    d^(1/4) n^(-1/4) times a line's own scatter."""
    runs, labels = [], []
    grid = step ** np.arange(-60, 61)
    for d in (1e3, 1e4, 1e5, 1e6, 1e7):
        for n in (10, 20, 40, 80):
            if d < 5 * n * n:
                continue
            centre = 2.0 * math.sqrt(d) * n**b * math.exp(tau * rng.standard_normal())
            for seed in seeds:
                stars = centre * np.exp(spread * rng.standard_normal(n // 5))
                norms = centre * grid[::4] * step ** rng.uniform(0, 4)
                r, lab = _line(stars, norms, d=d, n=n, seed=seed)
                select = d**0.25 * n**-0.25 * math.exp(0.05 * rng.standard_normal())
                lab["selects"] = lab["selects_argmax"] = lab["selects_hardmax"] = r["signal_norm"].to_numpy() > select
                runs.append(r)
                labels.append(lab)
    return pd.concat(runs, ignore_index=True), pd.concat(labels, ignore_index=True)


def test_the_order_statistic_predicts_the_labels_extra_b():
    """Flipped samples that spread (0.5 in ln) about an exact n^(-1/2): the samples' b holds -1/2,
    the label's is lower by what the rank's order statistic adds, inside the difference's interval;
    where the samples do not spread (one crossing per line), the label's b is theirs and the spread
    is not read (one bracket holds every sample)."""
    rng = np.random.default_rng(3)
    runs, labels = simulated_atlas(rng, spread=0.5)
    table = n_law.n_laws(runs, labels, CRITERIA).set_index("boundary")
    samples, label = table.loc[n_law.SAMPLES], table.loc["not overfitting"]
    assert samples["b_low"] <= -0.5 <= samples["b_high"], samples[["b", "b_low", "b_high"]]
    assert samples["spread"] == pytest.approx(0.5, abs=0.08)
    assert samples["order_b"] < -0.08  # the largest of 2 at n = 10, the 8th of 16 at n = 80
    assert samples["label_minus_samples_low"] <= samples["order_b"] <= samples["label_minus_samples_high"]
    assert samples["label_minus_samples_high"] < 0, samples  # the label's b is measurably lower
    assert label["b_high"] < -0.5

    runs, labels = simulated_atlas(np.random.default_rng(4), spread=0.0)
    same = n_law.n_laws(runs, labels, CRITERIA).set_index("boundary").loc[n_law.SAMPLES]
    assert np.isnan(same["spread"]) and np.isnan(same["order_b"])  # one bracket per line: no spread to read
    assert same["label_minus_samples_low"] <= 0 <= same["label_minus_samples_high"]


def test_the_local_slopes_follow_a_bend_in_n():
    """Crossings with slope -1/2 in ln n up to n = 20 and 0 after: the octave slopes say so."""
    rng = np.random.default_rng(7)
    rows = []
    for d in (1e4, 1e5, 1e6, 1e7):
        for n in (10, 20, 40, 80):
            for seed in (1, 2, 3):
                star = 3.0 * d**0.25 * min(n, 20) ** -0.5 * math.exp(0.02 * rng.standard_normal())
                lower = star * math.exp(-0.03 * rng.uniform())
                rows.append({"d": d, "n": n, "seed": seed, "lower": lower, "upper": lower * 1.03, "censored": "",
                             "changes": 1, "runs": 10})  # fmt: skip
    fit = crossings.fit(pd.DataFrame(rows), "octaves", knots=n_law.n_knots([10, 20, 40, 80]))
    assert fit.estimates["b[10,20]"] == pytest.approx(-0.5, abs=0.05)
    for name in ("b[20,40]", "b[40,80]"):
        low, high = fit.intervals[name]
        assert low <= 0.0 <= high and high - low < 0.1, (name, low, high)


def test_the_spread_is_unknown_where_every_sample_lies_in_one_bracket():
    """Three samples inside one factor-2 bracket: the brackets cannot say how far apart they lie
    (NaN, not 0); a line whose counts change more than once is left out of the spread."""
    runs, labels = _line([5.0, 5.5, 6.0], [1.0, 2.0, 4.0, 8.0, 16.0])
    assert np.isnan(n_law.within_line_spread(n_law.sample_crossings(labels, runs)))
    runs, labels = _line(np.exp([-1.0, 0.0, 1.0]), list(np.exp(np.arange(-3, 3, 0.01))))
    cr = n_law.sample_crossings(labels, runs)
    wild = cr.assign(d=cr["d"] + 1, lower=cr["lower"] / 50, changes=3)  # a second line, non-monotone
    both = pd.concat([cr, wild], ignore_index=True)
    assert n_law.within_line_spread(both) == pytest.approx(n_law.within_line_spread(cr))


def test_the_spread_of_two_blocks_is_their_half_distance():
    """Flipped samples fitted in two blocks (half of them at one norm, half at another, as the
    atlas's lines do): the spread read is half the blocks' distance in ln, the standard deviation
    of two equal point masses."""
    stars = np.exp([-0.5, -0.5, 0.5, 0.5])
    runs, labels = _line(stars, list(np.exp(np.arange(-3, 3, 0.01))))
    assert n_law.within_line_spread(n_law.sample_crossings(labels, runs)) == pytest.approx(
        0.5 * math.sqrt(4 / 3), abs=0.02
    )  # pooled with k - 1 = 3 degrees of freedom: 4 deviations of 0.5 over 3
