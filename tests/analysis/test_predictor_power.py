"""The predictor check's bias and calibration scores and their power (benign/analysis/predictor_check.py):
a hand-worked z and t, the bias interval's coverage on simulated checks with no bias, the power
against a bias of 0.1 in ln ||mu||* on today's design and on a finer one, and the spread's power
against a predicted sd half the true one on the same two."""

import math

import numpy as np
import pandas as pd
import pytest

from benign.analysis import predictor_check as check

QUARTER_OCTAVE = math.log(2) / 4  # the check's grid: norms a factor 2^(1/4) apart
# the predicted sd of a new crossing in ln ||mu||*: the not-overfitting boundary's 95% interval is
# about +-7% at 10^4 to 10^6 steps (an earlier default run's), t(0.975) on 16 lines - 3 terms is 2.16
TODAY_SD = math.log(1.07) / 2.160369
TODAY_SEEDS = 2  # the check's seeds a cell (config/config.yaml's atlas_check)


def _design(cells: int, seeds: int, sd: float, width: float) -> pd.DataFrame:
    return pd.DataFrame({"sd": [sd] * cells, "width": [width] * cells, "scored": [seeds] * cells})


def test_z_reads_a_bracket_at_its_log_midpoint_with_its_uniform_variance():
    # a bracket from 1 to e^0.2: midpoint 0.1 in ln, 0.05 above the prediction e^0.05; variance
    # 0.03^2 + 0.2^2 / 12
    z = check.seed_z(1.0, math.exp(0.2), math.exp(0.05), 0.03)
    assert z == pytest.approx(0.05 / math.sqrt(0.03**2 + 0.2**2 / 12))
    assert z == pytest.approx(0.768473, abs=1e-6)
    assert check.seed_z(math.exp(0.05), math.exp(0.05), math.exp(0.05), 0.03) == 0.0  # a closed point
    assert np.isnan(check.seed_z(0.0, 2.0, 1.0, 0.03)) and np.isnan(check.seed_z(2.0, math.inf, 1.0, 0.03))


def test_the_bias_is_students_t_over_the_cells_with_seeds_averaged_first():
    mean, low, high, p = (float(v) for v in check.bias_test([1.0, 2.0, 3.0]))
    t = 2.0 / (1.0 / math.sqrt(3))  # mean 2, sd 1 over 3 cells: t = 2 sqrt(3) on 2 degrees of freedom
    assert t == pytest.approx(3.464102)
    assert mean == 2.0 and p == pytest.approx(0.074180, abs=1e-6)  # 2 P(t_2 > 3.4641)
    assert (low, high) == pytest.approx((2.0 - 4.302653 / math.sqrt(3), 2.0 + 4.302653 / math.sqrt(3)), abs=1e-6)
    # two cells, one with three seeds: the cell, not the seed, is the unit
    brackets = pd.DataFrame(
        {
            "boundary": "b", "horizon": 10, "d": [1, 1, 1, 2], "n": 1, "seed": [1, 2, 3, 1],
            "lower": np.exp([0.0, 0.0, 0.2, -0.2]), "upper": np.exp([0.2, 0.2, 0.4, 0.0]), "censored": "",
            "predicted": 1.0, "sd": 0.03, "low": 0.9, "high": 1.1, "place": "straddles", "design": True,
        }
    )  # fmt: skip
    cells = check.cell_coverage(brackets)
    unit = math.sqrt(0.03**2 + 0.2**2 / 12)
    assert cells["scored"].tolist() == [3, 1]
    assert cells["z"].tolist() == pytest.approx([(0.1 + 0.1 + 0.3) / 3 / unit, -0.1 / unit])
    assert cells["residual"].tolist() == pytest.approx([0.5 / 3, -0.1])
    assert cells["width"].tolist() == pytest.approx([0.2, 0.2])


def _null_check(rng, cells: int, shared: float) -> tuple[bool, bool]:
    """One simulated check with no bias: ``cells`` cells of today's seeds, predicted sds near today's,
    the crossings bracketed on one factor-2^(1/4) grid at a random offset; whether the bias
    interval holds 0 and the spread's interval holds 1."""
    sd = TODAY_SD * np.exp(rng.uniform(-0.5, 0.5, cells))[:, None]
    predicted = rng.uniform(-3, 3, cells)[:, None]
    noise = math.sqrt(shared) * rng.standard_normal((cells, 1)) + math.sqrt(1 - shared) * rng.standard_normal(
        (cells, TODAY_SEEDS)
    )
    crossing, offset = predicted + sd * noise, rng.uniform() * QUARTER_OCTAVE
    step = np.floor((crossing - offset) / QUARTER_OCTAVE)
    lower, upper = np.exp(offset + step * QUARTER_OCTAVE), np.exp(offset + (step + 1) * QUARTER_OCTAVE)
    z = check.seed_z(lower, upper, np.exp(predicted), sd)
    scores = pd.DataFrame({"scored": TODAY_SEEDS, "z": z.mean(axis=1), "z_within": z.std(axis=1)})
    _, low, high, _ = check.bias_test(scores["z"].to_numpy())
    _, spread_low, spread_high = check.calibration(scores)
    return bool(low <= 0 <= high), bool(spread_low <= 1 <= spread_high)


def test_the_bias_interval_covers_no_bias_about_95_percent_of_the_time():
    """300 simulated checks of today's design (8 cells of 2 seeds, factor-2^(1/4) brackets), the
    seeds of a cell sharing all, half or none of a new crossing's deviation: the bias interval
    holds 0 in 91% to 99% of them, the spread's interval holds 1 in at least 90%."""
    rng = np.random.default_rng(11)
    hits = np.array([_null_check(rng, 8, shared) for shared in (1.0, 0.5, 0.0) for _ in range(100)])
    bias, spread = hits.mean(axis=0)
    print(f"predictor check, no bias, 300 simulated checks: bias interval holds 0 in {bias:.3f}, "
          f"spread's holds 1 in {spread:.3f}")  # fmt: skip
    assert 0.91 <= bias <= 0.99 and spread >= 0.9


def test_the_simulated_power_keeps_its_size_and_grows_with_the_bias():
    design = _design(8, 3, TODAY_SD, QUARTER_OCTAVE)
    assert check.bias_power(design, delta=0.0) == pytest.approx(0.05, abs=0.02)
    assert check.bias_power(design, delta=0.03) < check.bias_power(design, delta=0.06) < 0.9
    assert check.bias_power(_design(1, 3, TODAY_SD, QUARTER_OCTAVE)) == 0.0  # one cell: no t test


def test_a_design_of_16_cells_resolved_finer_than_the_interval_sees_a_bias_of_0_1():
    """16 cells (8 d x n 30 and 50, n eta even), 3 seeds, each crossing bisected to 0.02 in ln,
    finer than the predicted half-width (about 0.067), predicted sd twice today's: power >= 80%
    against a bias of 0.1; the words follow the bias interval against the margin 0.1."""
    power = check.bias_power(_design(16, 3, 2 * TODAY_SD, 0.02))
    assert 0.02 < 1.96 * 2 * TODAY_SD and power >= check.POWER
    assert check.bias_verdict(-0.03, 0.04, power, 16) == "within ±0.1"
    assert check.bias_verdict(0.12, 0.2, power, 16) == "biased beyond 0.1"
    assert check.bias_verdict(0.05, 0.12, power, 16) == f"cannot tell (power {power:.0%})"


def test_todays_design_sees_a_bias_of_0_1_in_its_design_cells_and_cannot_tell_elsewhere():
    """Today's check: 8 cells (6 in the design region, 2 below it, reported apart), 2 seeds,
    factor-2^(1/4) brackets, predicted sd about 0.031 (the not-overfitting boundary from 10^4
    steps). The predicted 95% interval (about +-0.067) is narrower than one bracket (0.173): no seed
    can lie inside it, so coverage cannot be told. The bias test can: against a bias of 0.1 its
    power is >= 80% on the 6 design cells (and on all 8), even with the seeds of a cell sharing
    all their deviation. It cannot on the 2 cells below the design region, nor where the predicted
    sd is large (the not-overfitting boundary at 10^3 steps, sigma about 1.1): there the words are
    'cannot tell (power X%)'. The powers are printed."""
    assert 2 * 1.96 * TODAY_SD < QUARTER_OCTAVE
    powers = {
        "design, 6 cells": check.bias_power(_design(6, TODAY_SEEDS, TODAY_SD, QUARTER_OCTAVE)),
        "all 8 cells": check.bias_power(_design(8, TODAY_SEEDS, TODAY_SD, QUARTER_OCTAVE)),
        "below design, 2 cells": check.bias_power(_design(2, TODAY_SEEDS, TODAY_SD, QUARTER_OCTAVE)),
        "design, sd 1.1 (10^3 steps)": check.bias_power(_design(6, TODAY_SEEDS, 1.1, QUARTER_OCTAVE)),
        "design, sd 0.06": check.bias_power(_design(6, TODAY_SEEDS, 0.06, QUARTER_OCTAVE)),
    }
    print("predictor check, power against a bias of 0.1: " + ", ".join(f"{k} {v:.2f}" for k, v in powers.items()))
    assert powers["design, 6 cells"] >= check.POWER and powers["all 8 cells"] >= check.POWER
    for name in ("below design, 2 cells", "design, sd 1.1 (10^3 steps)"):
        assert powers[name] < check.POWER
        assert check.bias_verdict(-0.2, 0.3, powers[name], 6) == f"cannot tell (power {powers[name]:.0%})"
    assert check.bias_verdict(0.2, 0.3, powers["below design, 2 cells"], 2) == "cannot tell (2 cells)"  # t on 1 df


def test_the_spread_on_arrays_is_the_spread_of_each_simulated_check():
    """:func:`calibration_arrays` over a leading axis of simulated checks gives, check by check,
    what :func:`calibration` gives on the check's cells (unequal seeds, one cell unscored)."""
    rng = np.random.default_rng(5)
    k = np.array([3, 2, 3, 1, 3])
    z, within = rng.standard_normal((4, 5)), np.abs(rng.standard_normal((4, 5))) * (k > 1)
    spread = np.stack(check.calibration_arrays(k, z, within), axis=-1)
    for row in range(4):
        cells = pd.DataFrame({"scored": [*k, 0], "z": [*z[row], 9.0], "z_within": [*within[row], 9.0]})
        assert spread[row] == pytest.approx(check.calibration(cells))
    assert np.isnan(check.calibration_arrays(k[:1], z[:, :1], within[:, :1])).all()  # one cell: no spread


def test_todays_design_cannot_see_a_predicted_sd_half_the_true_one():
    """The referee's case: today's 6 design cells, 2 seeds, factor-2^(1/4) brackets (width 0.173
    in ln, uniform variance width^2 / 12 about 72% of z's) and a predicted sd about 0.031. With the
    true sd twice that, a seed's z spreads about 1.35 (not 2): the spread's interval lies above 1
    in about 21% of simulated checks (measured 0.21 with the seeds of a cell sharing all their
    deviation, the least power; more with less shared), so an interval such as [0.69, 1.71] is
    "cannot tell", never "calibrated". The powers are printed."""
    design = _design(6, TODAY_SEEDS, TODAY_SD, QUARTER_OCTAVE)
    uniform = QUARTER_OCTAVE**2 / 12
    assert uniform / (uniform + TODAY_SD**2) == pytest.approx(0.72, abs=0.01)
    assert math.sqrt((uniform + (2 * TODAY_SD) ** 2) / (uniform + TODAY_SD**2)) == pytest.approx(1.35, abs=0.01)
    powers = {shared: check.calibration_power(design, 2.0, shared=shared) for shared in (1.0, 0.5, 0.0)}
    print("predictor check, today's design (6 cells x 2 seeds, width 0.173), power of the spread against a true "
          "sd 2 x the predicted: " + ", ".join(f"seeds sharing {k:g}: {v:.3f}" for k, v in powers.items()))  # fmt: skip
    power = powers[1.0]
    assert power == check.calibration_power(design)  # the default: factor 2, all shared
    assert 0.1 < power < 0.35 and power <= min(powers.values()) and max(powers.values()) < check.POWER
    words = check.spread_verdict(0.69, 1.71, power)
    assert words == f"cannot tell (power {power:.0%} against an sd off by 2)" and words.startswith("cannot tell")


def test_a_design_of_16_cells_bracketed_finer_than_the_sd_sees_a_predicted_sd_half_the_true_one():
    """16 cells of 3 seeds, each crossing bracketed to 0.005 in ln (much finer than the predicted
    sd, about 0.031): the spread's interval lies above 1 in >= 80% of simulated checks whose true
    sd is twice the predicted (measured 0.96); today's 6 cells are not enough even so (0.67; 8 give
    0.79, 10 give 0.85). The words follow the interval."""
    power = check.calibration_power(_design(16, 3, TODAY_SD, 0.005))
    fewer = check.calibration_power(_design(6, 3, TODAY_SD, 0.005))
    print(f"predictor check, brackets 0.005 in ln, power of the spread against a true sd 2 x the predicted: "
          f"16 cells {power:.3f}, 6 cells {fewer:.3f}")  # fmt: skip
    assert power >= check.POWER > fewer
    assert check.spread_verdict(1.2, 2.4, power) == "spread > 1: the predicted sd too small"
    assert check.spread_verdict(0.3, 0.8, power) == "spread < 1: the predicted sd too large"
    assert check.spread_verdict(0.8, 1.4, power) == f"cannot tell (power {power:.0%} against an sd off by 2)"
    assert check.calibration_power(_design(1, 3, TODAY_SD, 0.005)) == 0.0  # one cell: no spread


def test_the_spread_rarely_calls_a_right_sd_too_small():
    """With the true sd the predicted one (factor 1) the spread's interval lies above 1 in about
    2.5% of simulated checks (one end of a 95% interval), below 10% on both designs, the seeds of a
    cell sharing all or none of their deviation."""
    sizes = {
        (name, shared): check.calibration_power(design, 1.0, shared=shared)
        for name, design in (("today", _design(6, 3, TODAY_SD, QUARTER_OCTAVE)), ("fine", _design(16, 3, TODAY_SD, 0.005)))
        for shared in (1.0, 0.0)
    }  # fmt: skip
    print("predictor check, spread above 1 with the sd right: " + ", ".join(f"{k} {v:.3f}" for k, v in sizes.items()))
    assert all(size < 0.1 for size in sizes.values())
    assert sizes[("fine", 1.0)] == pytest.approx(0.025, abs=0.015)
