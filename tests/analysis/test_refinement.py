"""The atlas's refinement and step-convergence runs (benign/analysis/refinement.py): windows
around each transition of each line at every horizon, every refinement seed trained there, and
the same windows again at a finer step."""

import math

import numpy as np
import pandas as pd
import pytest

from benign.analysis import convergence
from benign.analysis.refinement import (
    convergence_runs,
    crossings,
    offsets,
    prefix_points,
    refinement_runs,
    window_norms,
    windows,
)
from benign.analysis.theory import Criteria, regimes_at
from benign.plan.resources import Cluster, pack
from benign.plan.schema import default
from benign.synthetic.spec import RunSpec
from benign.synthetic.trainer import log_steps

CRITERIA = Criteria(**default("synthetic.regime"))
CLUSTER = Cluster()  # no ceilings


def test_crossings_are_the_neighbouring_norms_where_the_mean_label_crosses_a_half():
    norms = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    assert crossings(norms, np.array([0, 0, 1 / 3, 2 / 3, 1])) == [(4.0, 8.0)]
    assert crossings(norms[::-1], np.array([1, 2 / 3, 1 / 3, 0, 0])) == [(4.0, 8.0)]  # order does not matter
    assert crossings(norms, np.array([0, 1, 0, 1, 1])) == [(1.0, 2.0), (2.0, 4.0), (4.0, 8.0)]
    assert crossings(norms, np.ones(5)) == []


def test_a_window_holds_its_ends_and_its_points_at_a_seeds_offset():
    assert window_norms(8.0, 16.0, 2) == pytest.approx(8.0 * 2 ** (np.arange(4) / 3), rel=1e-6)
    shifted = window_norms(8.0, 16.0, 1, offset=0.25)  # one point: steps of sqrt(2), shifted a quarter step
    assert shifted == pytest.approx([8.0, 8.0 * 2**0.125, 8.0 * 2**0.625, 16.0], rel=1e-5)
    assert offsets([3, 1, 2, 4]) == {1: 0.0, 2: 0.25, 3: 0.5, 4: 0.75}  # the first seed on the coarse grid
    staggered = sorted({v for s, u in offsets(range(1, 9)).items() for v in window_norms(8.0, 16.0, 1, u)})
    assert np.diff(np.log(staggered)) == pytest.approx(np.log(2) / 16, rel=1e-5)  # 8 seeds together: a 16th of 2


def _line(fitted_above: float, selects_from: float, steps: int = 100, seeds=(1, 2)):
    """A coarse line d 40, n 10 at norms 1..16 (factor 2): flipped labels fitted below
    ``fitted_above`` at step 100 (below half of it at step 10), r selecting from ``selects_from``."""
    rows, curves = [], []
    for seed in seeds:
        for m in (1.0, 2.0, 4.0, 8.0, 16.0):
            spec = RunSpec(d=40, n=10, T=4, n_test=20, signal_norm=m, seed=seed, steps=steps, step_size=2.0)
            rows.append({**spec.__dict__, "sweeps": list(spec.sweeps), "run_id": spec.run_id, "status": "ok"})
            for step in (0, 10, steps):
                limit = fitted_above if step == steps else fitted_above / 2
                curves.append({"run_id": spec.run_id, "step": step, "train_acc_noisy": float(step > 0 and m < limit),
                               "test_loss_normalised": 0.1 if step and m >= selects_from else 1.0,
                               "test_sel_relevant": float(step > 0 and m >= selects_from),
                               "test_err_hardmax": 0.0 if step and m >= selects_from else 0.5})  # fmt: skip
    return pd.DataFrame(rows), pd.DataFrame(curves)


def test_windows_are_found_at_every_horizon_each_line_reaches():
    runs, curves = _line(fitted_above=6.0, selects_from=3.0)
    found = windows(runs, regimes_at(curves, [10, 100], CRITERIA))
    overfit = found[found["boundary"] == "not overfitting"].set_index("horizon")
    assert (overfit.loc[10, "low"], overfit.loc[10, "high"]) == (2.0, 4.0)  # fitted below 3 at step 10
    assert (overfit.loc[100, "low"], overfit.loc[100, "high"]) == (4.0, 8.0)
    selection = found[found["boundary"] == "selection (harmful below)"]
    assert set(zip(selection["low"], selection["high"])) == {(2.0, 4.0)}


def test_refinement_trains_every_seed_at_every_window_norm_it_has_not_run():
    runs, curves = _line(fitted_above=6.0, selects_from=3.0)
    planned = refinement_runs(runs, curves, [10, 100], points=1, seeds=[3, 4], log_points=5, criteria=CRITERIA,
                              setting="atlas_refine")  # fmt: skip
    by_seed = {s: sorted(r["signal_norm"] for r in planned if r["seed"] == s) for s in (1, 2, 3, 4)}
    for seed, offset in offsets([1, 2, 3, 4]).items():
        norms = sorted({*window_norms(2.0, 4.0, 1, offset), *window_norms(4.0, 8.0, 1, offset)})
        coarse = (2.0, 4.0, 8.0) if seed in (1, 2) else ()  # the coarse seeds have the window's ends already
        assert by_seed[seed] == pytest.approx([n for n in norms if n not in coarse]), seed
    assert all(r["steps"] == 100 for r in planned)  # every window (selection's at 2 to 4 too) is one of step 100
    assert all(r["step_size"] == 2.0 and r["setting"] == "atlas_refine"
               and r["sweeps"] == ["atlas_refine"] and r["mlp_dim"] is None for r in planned)  # fmt: skip
    jobs = pack(planned, "token_atlas_refine", 1, CLUSTER)
    assert len(jobs) == 4  # one (n, T, d, seed, steps) batch each
    assert RunSpec(**planned[0]).lr == pytest.approx(2.0 / 40)  # the step size sets the lr


def test_a_norm_only_an_early_window_holds_is_trained_to_that_horizon():
    """Not overfitting crosses between 2 and 4 at step 10 and between 4 and 8 at step 100,
    selection between 8 and 16 at both: a norm of the step-10 window alone is trained to 10 steps
    and logged at the prefix of the line's grid, every other to 100."""
    runs, curves = _line(fitted_above=6.0, selects_from=12.0)
    planned = refinement_runs(runs, curves, [10, 100], points=1, seeds=[3, 4], log_points=5, criteria=CRITERIA,
                              setting="atlas_refine")  # fmt: skip
    spread = offsets([1, 2, 3, 4]).items()
    late = {round(v, 6) for s, u in spread for w in ((4.0, 8.0), (8.0, 16.0)) for v in window_norms(*w, 1, u)}
    early = {round(v, 6) for s, u in spread for v in window_norms(2.0, 4.0, 1, u)} - late
    assert early and {round(r["signal_norm"], 6) for r in planned if r["steps"] == 10} == early
    for r in planned:
        assert (r["steps"], r["log_points"]) == ((10, 3) if round(r["signal_norm"], 6) in early else (100, 5)), r
    assert len(pack(planned, "token_atlas_refine", 1, CLUSTER)) == 8  # a seed's runs to 10 and to 100 apart


@pytest.mark.parametrize("horizon", [1, 3, 10, 32, 100, 316, 1000, 3162, 10000, 31623, 100000, 316228])
def test_a_run_to_an_earlier_horizon_logs_the_prefix_of_the_lines_steps(horizon):
    """The fits' horizons (10^(k/2), rounded) on the atlas's grid (61 points to 10^6): the shorter
    run logs its horizon and, up to it, the same number of steps, each within its rounding."""
    full = [s for s in log_steps(10**6, 0, 61) if s <= horizon]
    short = log_steps(horizon, 0, prefix_points(horizon, 10**6, 61))
    assert horizon in short and len(short) == len(full)
    assert (np.abs(np.array(short) - np.array(full)) <= np.maximum(1, 0.005 * np.array(full))).all()


def test_convergence_runs_repeat_the_longest_horizons_windows_at_a_finer_step():
    runs, curves = _line(fitted_above=6.0, selects_from=3.0)
    checked = convergence_runs(runs, curves, horizon=100, points=1, seeds=[2], refined=[3, 4], factor=2,
                               log_points=5, criteria=CRITERIA, setting="atlas_convergence")  # fmt: skip
    norms = sorted({*window_norms(4.0, 8.0, 1, 0.25), *window_norms(2.0, 4.0, 1, 0.25)})  # seed 2 of 1..4: 1/4
    assert sorted(r["signal_norm"] for r in checked) == pytest.approx(norms)
    assert all(r["seed"] == 2 and r["steps"] == 200 and r["step_size"] == 1.0 for r in checked)
    assert RunSpec(**checked[0]).lr == pytest.approx(1.0 / 40)  # half the atlas's lr, twice the steps


def _pairs(shifts: dict[tuple[float, float], list[float]], width: float = math.log(2)) -> pd.DataFrame:
    """Paired crossings (benign.analysis.convergence.paired_crossings' columns) of hand-made lines:
    per (d, n), each seed's bracket [1, 2) and the finer step's moved by the given ln shift."""
    rows = []
    for (d, n), moves in shifts.items():
        for seed, move in enumerate(moves):
            lo = math.exp(0.01 * seed)
            rows.append({"d": d, "n": n, "seed": seed, "lower": lo, "upper": lo * math.exp(width),
                         "lower_other": lo * math.exp(move), "upper_other": lo * math.exp(width + move),
                         "shift": move, "moved": abs(move) >= width})  # fmt: skip
    return pd.DataFrame(rows)


def test_the_step_checks_equivalence_test_sees_a_shift_and_says_what_the_grid_resolves():
    """Four lines: shifts of 0 everywhere are 'equivalent', resolved only to the grid (no [0, 0]
    interval); a shift of 0.3 on every line 'moves'; shifts that scatter about 0 by more than the
    resolution 'cannot tell' (the test fails where it should)."""
    lines = [(1e3, 10), (1e4, 10), (1e4, 20), (1e5, 20)]
    same = convergence.paired_shift(_pairs({line: [0.0, 0.0] for line in lines}))
    assert same["shift_verdict"] == "equivalent" and same["shift"] == 0 and same["shift_grid"] > 0
    moved = convergence.paired_shift(_pairs({line: [0.3 + 0.01 * k, 0.28] for k, line in enumerate(lines)}))
    assert moved["shift_verdict"] == "moves" and moved["shift_low"] > 0 and np.isnan(moved["shift_grid"])
    noisy = convergence.paired_shift(_pairs({line: [s, s] for line, s in zip(lines, (0.4, -0.4, 0.3, -0.3))}))
    assert noisy["shift_verdict"] == "cannot tell"
