"""The atlas's W-frozen control (benign.analysis.w_control): its runs are twins of the atlas's and
the pairing measures a known shift (its table: tests/tables/test_w_control.py)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from benign.analysis.boundaries import BOUNDARIES
from benign.analysis.w_control import COLUMNS, shift_table, totals, twin_pairs, unpaired
from benign.synthetic.trainer import RunSpec, train_runs

SMALL = dict(engine="gram", d=400, n=6, T=4, n_test=20, step_size=5)


def twins(norms, seeds, steps: int, **log) -> tuple[list[RunSpec], list[RunSpec]]:
    """The same runs of the paper's model (sweep atlas) and of the W-frozen one (sweep atlas_w0)."""
    made = lambda model, sweep: [RunSpec(model=model, signal_norm=m, seed=s, steps=steps, setting=sweep,  # noqa: E731
                                         sweeps=(sweep,), **SMALL, **log) for s in seeds for m in norms]  # fmt: skip
    return made("token", "atlas"), made("token_p_w0", "atlas_w0")


def test_a_control_run_and_its_atlas_twin_share_data_and_w0():
    """p starts at 0, so W's first update is zero: at step 1 the twins are the same run, value for
    value; later training W makes them differ."""
    trained, frozen = twins([4.0, 16.0], [1], steps=3, log_every=1)
    runs, curves, _ = train_runs(trained + frozen, device="cpu")
    model = curves.merge(runs[["run_id", "model", "signal_norm"]], on="run_id")
    metrics = [c for c in curves.columns if c not in ("run_id", "step")]
    at = lambda step, name: (model[(model["step"] == step) & (model["model"] == name)]  # noqa: E731
                             .sort_values("signal_norm")[metrics].reset_index(drop=True))  # fmt: skip
    for step in (0, 1):
        pd.testing.assert_frame_equal(at(step, "token"), at(step, "token_p_w0"), check_exact=True)
    assert not at(3, "token").equals(at(3, "token_p_w0"))


NORMS = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]


def labelled(model: str, crossings: dict, steps: dict | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Hand-made runs and labels of one (d, n) line per seed: every boundary's side is True from
    the norm ``crossings[seed]`` up, read at horizon 100 at the logged step ``steps[seed]`` (100)."""
    runs, labels = [], []
    for seed, first_above in crossings.items():
        for norm in NORMS:
            run_id = f"{model}-s{seed}-m{norm:g}"
            runs.append({"run_id": run_id, "d": 1000, "n": 10, "seed": seed, "signal_norm": norm, "step_size": 5.0})
            above = norm >= first_above
            labels.append({"run_id": run_id, "horizon": 100, "step": (steps or {}).get(seed, 100), "overfits": not above,
                           "selects": above, "selects_argmax": above, "selects_hardmax": above})  # fmt: skip
    return pd.DataFrame(runs), pd.DataFrame(labels)


def test_the_pairing_finds_a_known_shift():
    """Frozen crossings between 4 and 8 on every line; trained: one grid step up (seed 1, brackets
    touching: not moved), the same (seed 2), two steps up (seed 3: disjoint, moved). Seed 4's twin
    logs on another schedule: not paired."""
    frozen_runs, frozen = labelled("token_p_w0", {1: 8, 2: 8, 3: 8, 4: 8})
    trained_runs, trained = labelled("token", {1: 16, 2: 8, 3: 32, 4: 8}, steps={4: 90})
    pairs, lines = twin_pairs(trained_runs, trained, frozen_runs, frozen)
    assert lines["paired"].tolist() == [True, True, True, False]
    one = pairs[pairs["boundary"] == BOUNDARIES[1][0]].set_index("seed")
    assert one["shift"].to_dict() == pytest.approx({1: math.log(2), 2: 0.0, 3: 2 * math.log(2)})
    assert one["identical"].tolist() == [False, True, False] and one["moved"].tolist() == [False, False, True]
    table = shift_table(pairs, lines)
    assert table.columns.tolist() == COLUMNS and table["boundary"].tolist() == [name for name, *_ in BOUNDARIES]
    for row in table.itertuples():  # every boundary's side is the same here
        assert (row.seeds, row.lines, row.closed, row.identical, row.moved) == (4, 3, 3, 1, 1)
        assert row.shift_mean == pytest.approx(math.log(2)) and row.grid_step == pytest.approx(math.log(2))
        assert (row.shift_steps, row.shift_steps_min, row.shift_steps_max) == pytest.approx((1.0, 0.0, 2.0))
        assert (row.horizon, row.step, row.time) == (100, 100, 500.0)


def test_the_totals_sum_every_d_and_the_unpaired_count_each_line_horizon_once():
    """Two boundaries' rows by hand: the totals add the d's of a (boundary, horizon); a (d, n,
    horizon) with 3 seeds and 1 paired line counts 2 unpaired, once for its two boundaries."""
    table = pd.DataFrame(
        {
            "boundary": ["a", "a", "b", "b"],
            "d": [1e3, 1e4, 1e3, 1e4],
            "n": [10, 10, 10, 10],
            "horizon": [100, 100, 100, 100],
            "seeds": [3, 3, 3, 3],
            "lines": [3, 1, 2, 1],
            "identical": [2, 1, 1, 0],
            "moved": [0, 0, 1, 1],
        }
    )
    summed = totals(table)
    assert summed.to_dict("records") == [
        {"boundary": "a", "horizon": 100, "lines": 4, "identical": 3, "moved": 0},
        {"boundary": "b", "horizon": 100, "lines": 3, "identical": 1, "moved": 2},
    ]
    assert unpaired(table) == 1 + 2  # d 10^3: max(0, 1); d 10^4: max(2, 2)
    assert list(totals(table.iloc[:0]).columns) == ["boundary", "horizon", "lines", "identical", "moved"]
    assert unpaired(table.iloc[:0]) == 0
