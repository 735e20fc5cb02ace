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

CRITERIA = Criteria(fit_threshold=0.5, loss_threshold=0.5, rate_threshold=0.5, head_acc_threshold=0.9,
                    hardmax_threshold=0.25)  # fmt: skip
STEP = 2 ** (1 / 8)  # the hand atlas's norm grid: a factor 2^(1/8), resolution 0.087 in ln


def test_a_ratio_is_a_bracket_over_the_other_stages_midpoint_on_the_same_line():
    base = pd.DataFrame({"d": [1e3, 1e3], "n": [10, 10], "seed": [1, 2], "lower": [2.0, 2.0],
                         "upper": [2.2, 2.2], "censored": ["", ""]})  # fmt: skip
    other = pd.DataFrame({"d": [1e3, 1e3], "n": [10, 10], "seed": [1, 2], "lower": [2.4, 2.2],
                          "upper": [2.6, np.inf]})  # fmt: skip
    ratios = lim.scaled(base, other)
    assert len(ratios) == 1  # the line whose other bracket is open is left out
    mid = math.sqrt(2.4 * 2.6)
    assert ratios.iloc[0]["lower"] == pytest.approx(2.0 / mid) and ratios.iloc[0]["upper"] == pytest.approx(2.2 / mid)


def hand_atlas(plateau_shift: float, twin_shift: float, limit_shift: float, spread: float = 0.03):
    """Runs, labels at step 1 and 10^6 steps, and a limit frame: on every line the selection
    labels cross at the first step's law (step 1), at the law times exp(plateau_shift) (the
    atlas at 10^6), exp(twin_shift) (the twin at 10^6) and exp(limit_shift) (the limit, both
    selections), each line's three moved together by its own draw (``spread``), each seed's atlas
    grid staggered, the limit's a factor 2^(1/64) grid."""
    rng = np.random.default_rng(3)
    runs, labels, limit = [], [], []
    for d in (1e3, 1e4, 1e5):
        for n in (10, 40):
            law = first_step.boundary("selects_hardmax", d, n, criteria=CRITERIA)
            for seed in range(1, 5):
                own = rng.normal(0, spread)  # the line's own draw, shared by its stages
                grid = law * STEP ** (np.arange(-12, 13) + seed / 4)
                for k, m in enumerate(grid):
                    rid = f"{d:g}_{n}_{seed}_{k}"
                    runs.append({"run_id": rid, "d": d, "n": n, "seed": seed, "signal_norm": m, "T": 8,
                                 "rho": 0.1, "eta": 0.2, "sigma": 1.0, "step_size": 5.0, "integrator": "flow"})  # fmt: skip
                    for horizon, at in ((1, 0.0), (10**6, plateau_shift + own)):
                        above = bool(m > law * math.exp(at))
                        labels.append({"run_id": rid, "horizon": horizon, "selects_argmax": above,
                                       "selects_hardmax": above, "overfits": True})  # fmt: skip
                for m in law * 2 ** (np.arange(-64, 65) / 64):
                    for selection in ("run", "global"):
                        above, trained = m > law * math.exp(limit_shift + own), m > law * math.exp(twin_shift + own)
                        limit.append({"d": d, "n": n, "T": 8, "rho": 0.1, "eta": 0.2, "sigma": 1.0, "seed": seed,
                                      "signal_norm": m, "selection": selection, "test_sel_relevant": float(above),
                                      "test_err_hardmax": 0.0 if above else 0.5, "test_sel_trained": float(trained),
                                      "test_err_trained": 0.0 if trained else 0.5, "differs": 0.0,
                                      "locally_optimal": 1.0, "changed": 0.0, "cosine": 0.99})  # fmt: skip
    return pd.DataFrame(runs), pd.DataFrame(labels), pd.DataFrame(limit)


@pytest.mark.parametrize(
    "shift, words",
    [(0.0, "within the margin of its limit"), (0.1, "further than the margin from its limit"),
     (0.05, "cannot tell")],  # the interval reaches across the margin's edge
)  # fmt: skip
def test_the_words_follow_the_shifts_interval_against_the_margin(shift, words):
    """Lines whose crossings are shifted by ``shift`` in ln (scatter 0.05, fine brackets)."""
    rng = np.random.default_rng(9)
    rows = []
    for d in (1e3, 1e4, 1e5, 1e6):
        for n in (10, 20, 40):
            for seed in range(1, 5):
                at = math.exp(shift + rng.normal(0, 0.05))
                rows.append({"d": d, "n": n, "seed": seed, "lower": at / 1.01, "upper": at * 1.01, "censored": "",
                             "changes": 1, "runs": 10})  # fmt: skip
    base = pd.DataFrame(rows)
    other = base.assign(lower=1 / 1.005, upper=1.005)
    out = lim.shift(base, other, (), 0.05, lim.LIMIT_WORDS)
    assert out["shift"] == pytest.approx(shift, abs=0.02)
    assert out["words"] == words


def test_each_shift_is_the_placed_one_and_only_the_twin_is_worded_against_its_limit():
    twin_shift, words = -0.20, "further than the margin from its limit"
    runs, labels, limit = hand_atlas(plateau_shift=-0.4, twin_shift=twin_shift, limit_shift=-0.3)
    table = lim.stages(runs, labels, limit, CRITERIA, margin=0.05)
    fits, every = table[table["kind"] == "fit"], table[table["kind"] == "shift"]
    assert set(fits["stage"]) == {"step 1", "atlas's plateau", "twin's plateau", "limit, the twin's selection",
                                  "limit, the global selection"}  # fmt: skip
    placed = {"twin's plateau minus twin's limit": twin_shift + 0.3, "atlas's plateau minus twin's plateau":
              -0.4 - twin_shift, "atlas's plateau minus twin's limit": -0.1, "global limit minus twin's limit": 0.0}  # fmt: skip
    for _, shifts in every.groupby("boundary"):
        shifts = shifts.set_index("stage")
        for name, value in placed.items():  # the atlas's brackets are a factor 2^(1/8): within one of the placed shift
            assert shifts.loc[name, "shift"] == pytest.approx(value, abs=math.log(STEP)), name
        assert shifts.loc["twin's plateau minus twin's limit", "words"] == words
        assert shifts.loc["atlas's plateau minus twin's limit", "words"] == ""  # W trained: its limit is not computed
    step1 = fits[fits["stage"] == "step 1"].iloc[0]
    assert step1["shift_from_law"] == pytest.approx(0.0, abs=math.log(STEP))
    cells = lim.cell_shifts(runs, labels, limit, CRITERIA)
    assert len(cells) == 2 * 3 * 6 and (cells["seeds"] == 4).all()
    twin = cells[cells["comparison"] == "twin's plateau minus twin's limit"]
    assert twin["shift"].to_numpy() == pytest.approx(twin_shift + 0.3, abs=0.02)  # a 2^(1/64) grid
    ratio = (cells["limit_crossing"] / cells["law_crossing"]).to_numpy()
    assert np.log(ratio) == pytest.approx(-0.3, abs=0.1)  # the lines' own draws, spread 0.03


def test_reached_counts_lines_whose_runs_near_the_crossing_hold_the_global_selections_kinds():
    """Two lines crossing between ||mu|| 4 and 8 at the last horizon; the runs within a factor 2
    of the crossing that fit every flipped label are compared: line 2 has one that attends
    otherwise, so 1 of 2 lines holds the kinds; a run far from the crossing or with a flipped label
    unfitted does not count."""
    norms = [1.0, 4.0, 8.0, 32.0]
    runs = pd.DataFrame([{"run_id": f"{s}_{m:g}", "d": 1e3, "n": 10, "seed": s, "signal_norm": m}
                         for s in (1, 2) for m in norms])  # fmt: skip
    kinds = dict(train_clean_sel_relevant=1.0, train_noisy_sel_relevant=0.0, train_noisy_sel_weak_true=0.0,
                 train_noisy_sel_weak_opposite=0.5, train_noisy_sel_irrelevant=0.5)  # fmt: skip
    curves = pd.DataFrame([{"run_id": r, "step": 100, "train_acc_noisy": 1.0, **kinds} for r in runs["run_id"]])
    curves.loc[curves["run_id"] == "2_4", "train_noisy_sel_weak_opposite"] = 1.0  # near the crossing: counts
    curves.loc[curves["run_id"] == "1_32", "train_noisy_sel_weak_opposite"] = 1.0  # far from it: does not
    curves.loc[curves["run_id"] == "1_8", ["train_acc_noisy", "train_noisy_sel_relevant"]] = [0.5, 0.5]  # unfitted
    labels = pd.DataFrame({"run_id": runs["run_id"], "horizon": 100, "overfits": True,
                           "selects_hardmax": runs["signal_norm"] > 5})  # fmt: skip
    selection = pd.DataFrame({"run_id": runs["run_id"], "clean_sel_relevant": 1.0, "noisy_sel_relevant": 0.0,
                              "noisy_sel_weak_true": 0.0, "noisy_sel_weak_opposite": 0.5,
                              "noisy_sel_irrelevant": 0.5})  # fmt: skip
    out = lim.reached(runs, curves, labels, selection).iloc[0]
    assert (out["lines"], out["lines_same"], out["runs"], out["runs_same"]) == (2, 1, 3, 2)
