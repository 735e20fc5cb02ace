"""The selection boundaries at step 1, the plateau and the computed limit (benign/analysis/limit.py):
the pairing of crossings by hand, the interval's coverage on simulated data, and the plateau's
shift and words on an atlas whose crossings are placed by hand."""

import math

import numpy as np
import pandas as pd
import pytest

from benign.analysis import first_step
from benign.analysis import limit as lim
from benign.analysis.theory import Criteria
from benign.tables import limit as limit_table

CRITERIA = Criteria(fit_threshold=0.5, loss_threshold=0.5, rate_threshold=0.5, head_acc_threshold=0.9,
                    hardmax_threshold=0.25)  # fmt: skip
STEP = 2 ** (1 / 8)  # the hand atlas's norm grid: a factor 2^(1/8), resolution 0.087 in ln


def test_a_pair_shifts_by_the_log_ratio_of_its_bracket_midpoints_and_is_disjoint_when_they_do_not_touch():
    plateau = pd.DataFrame({"d": [1e3, 1e3], "n": [10, 10], "seed": [1, 2], "lower": [2.0, 2.0],
                            "upper": [2.2, 2.2], "censored": ["", ""]})  # fmt: skip
    limit = pd.DataFrame({"d": [1e3, 1e3], "n": [10, 10], "seed": [1, 2], "lower": [2.4, 2.2],
                          "upper": [2.6, np.inf]})  # fmt: skip
    pairs = lim.paired(plateau, limit).set_index("seed")
    assert pairs.loc[1, "shift"] == pytest.approx(0.5 * math.log(2.0 * 2.2) - 0.5 * math.log(2.4 * 2.6))
    assert pairs.loc[1, "moved"] and not pairs.loc[2, "moved"]  # 2.2 touches 2.2
    assert np.isnan(pairs.loc[2, "shift"])  # an open bracket has no midpoint


def test_the_mean_interval_covers_the_mean_of_independent_draws_about_95_percent_of_the_time():
    rng = np.random.default_rng(7)
    hits = 0
    for _ in range(2000):
        _, low, high = lim.mean_interval(rng.normal(0.3, 0.1, size=8))
        hits += low <= 0.3 <= high
    assert 0.93 <= hits / 2000 <= 0.97


def _hand_atlas(plateau_shift: float, limit_shift: float):
    """Runs, labels at step 1 and 10^6 steps, and a limit frame: on every line the selection
    labels cross at the first step's law (step 1), at the law times exp(plateau_shift) (10^6) and
    at the law times exp(limit_shift) (the limit, both selections), each seed's grid staggered."""
    runs, labels, limit = [], [], []
    for d in (1e3, 1e4, 1e5):
        for n in (10, 40):
            law = first_step.boundary("selects_hardmax", d, n)
            for seed in range(1, 5):
                grid = law * STEP ** (np.arange(-12, 13) + seed / 4)
                for k, m in enumerate(grid):
                    rid = f"{d:g}_{n}_{seed}_{k}"
                    runs.append({"run_id": rid, "d": d, "n": n, "seed": seed, "signal_norm": m, "T": 8,
                                 "rho": 0.1, "eta": 0.2, "sigma": 1.0, "step_size": 5.0, "integrator": "flow"})  # fmt: skip
                    for horizon, shift in ((1, 0.0), (10**6, plateau_shift)):
                        above = bool(m > law * math.exp(shift))
                        labels.append({"run_id": rid, "horizon": horizon, "selects_argmax": above,
                                       "selects_hardmax": above, "overfits": True})  # fmt: skip
                    for selection in ("run", "global"):
                        above = m > law * math.exp(limit_shift)
                        limit.append({"d": d, "n": n, "T": 8, "rho": 0.1, "eta": 0.2, "sigma": 1.0, "seed": seed,
                                      "signal_norm": m, "selection": selection, "test_sel_relevant": float(above),
                                      "test_err_hardmax": 0.0 if above else 0.5, "differs": 0.0, "cosine": 0.99})  # fmt: skip
    return pd.DataFrame(runs), pd.DataFrame(labels), pd.DataFrame(limit)


@pytest.mark.parametrize("plateau_shift, limit_shift, words", [(-0.3, -0.3, "at its limit"),
                                                              (-0.6, -0.1, "short of its limit")])  # fmt: skip
def test_the_plateaus_shift_from_the_limit_is_the_placed_one_with_its_words(plateau_shift, limit_shift, words):
    runs, labels, limit = _hand_atlas(plateau_shift, limit_shift)
    table = lim.stages(runs, labels, limit, CRITERIA)
    assert set(table["stage"]) == {
        "step 1",
        "last horizon",
        "limit, the twin's selection",
        "limit, the global selection",
    }
    at_limit = table[table["horizon"] == np.inf]
    assert (at_limit["plateau_words"] == words).all()
    # each crossing is known to its bracket (a factor 2^(1/8)): the mean shift within one bracket of the placed one
    assert at_limit["plateau_shift"].to_numpy() == pytest.approx(plateau_shift - limit_shift, abs=math.log(STEP))
    step1 = table[table["stage"] == "step 1"].iloc[0]
    assert step1["shift_from_law"] == pytest.approx(0.0, abs=math.log(STEP))
    cells = lim.cell_shifts(runs, labels, limit, CRITERIA)
    assert len(cells) == 2 * 2 * 6 and (cells["seeds"] == 4).all()
    assert cells["shift"].to_numpy() == pytest.approx(plateau_shift - limit_shift, abs=math.log(STEP))
    ratio = (cells["limit_crossing"] / cells["law_crossing"]).to_numpy()
    assert np.log(ratio) == pytest.approx(limit_shift, abs=math.log(STEP))


def test_reached_counts_the_runs_whose_kinds_are_the_global_selections():
    runs = pd.DataFrame({"run_id": ["a", "b", "c"], "d": [1e3] * 3, "n": [10] * 3})
    kinds = dict(train_clean_sel_relevant=1.0, train_noisy_sel_relevant=0.0, train_noisy_sel_weak_true=0.0,
                 train_noisy_sel_weak_opposite=0.5, train_noisy_sel_irrelevant=0.5)  # fmt: skip
    curves = pd.DataFrame([{"run_id": r, "step": 100, **kinds} for r in "abc"])
    curves["train_acc_noisy"] = [1.0, 0.5, 1.0]  # run b leaves half its flipped labels unfitted
    curves.loc[2, "train_noisy_sel_weak_opposite"] = 1.0  # run c attends otherwise
    labels = pd.DataFrame({"run_id": list("abc"), "horizon": 100, "overfits": [True, True, True]})
    selection = pd.DataFrame({"run_id": list("abc"), "clean_sel_relevant": 1.0, "noisy_sel_relevant": 0.0,
                              "noisy_sel_weak_true": 0.0, "noisy_sel_weak_opposite": 0.5,
                              "noisy_sel_irrelevant": 0.5})  # fmt: skip
    out = lim.reached(runs, curves, labels, selection).iloc[0]
    assert (out["runs"], out["same"], out["overfitting_runs"], out["overfitting_same"]) == (3, 2, 2, 1)


def test_the_tables_state_the_atlas_setting_and_print_the_words_they_computed(tmp_path):
    runs, labels, limit = _hand_atlas(-0.6, -0.1)
    curves = pd.DataFrame({"run_id": runs["run_id"], "step": 10**6, "train_acc_noisy": 1.0, "train_clean_sel_relevant": 1.0,
                           "train_noisy_sel_relevant": 0.0, "train_noisy_sel_weak_true": 0.0,
                           "train_noisy_sel_weak_opposite": 1.0, "train_noisy_sel_irrelevant": 0.0})  # fmt: skip
    selection = pd.DataFrame({"run_id": runs["run_id"], "clean_sel_relevant": 1.0, "noisy_sel_relevant": 0.0,
                              "noisy_sel_weak_true": 0.0, "noisy_sel_weak_opposite": 1.0, "noisy_sel_irrelevant": 0.0})  # fmt: skip
    fits = limit_table.boundary_limits(runs, labels, CRITERIA, limit, tmp_path / "fits")
    cells = limit_table.limit_shifts(runs, curves, labels, CRITERIA, limit, selection, tmp_path / "cells")
    fits_md, cells_md = (tmp_path / "fits.md").read_text(), (tmp_path / "cells.md").read_text()
    for md in (fits_md, cells_md):
        assert "T 8; rho 0.1; eta 0.2; sigma 1; step_size 5; integrator flow" in md
    assert fits_md.count("short of its limit (tolerance") == 4  # 2 boundaries x 2 selections, as computed
    assert len(pd.read_csv(tmp_path / "fits.csv")) == len(fits) == 8
    assert len(pd.read_csv(tmp_path / "cells.csv")) == len(cells) == 24
    assert (
        "100 of 100; 100 of 100" in cells_md
    )  # every run of a cell (4 seeds x 25 norms) holds the global selection's kinds
