"""The atlas's refinement (benign/analysis/refinement.py): new norms inside each transition of each line."""

import numpy as np
import pandas as pd
import pytest

from benign.analysis.refinement import crossings, refinement_norms, refinement_runs
from benign.analysis.theory import Criteria
from benign.config.resources import Cluster, pack
from benign.config.schema import default


def test_crossings_are_the_neighbouring_norms_where_the_mean_label_crosses_a_half():
    norms = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    assert crossings(norms, np.array([0, 0, 1 / 3, 2 / 3, 1])) == [(4.0, 8.0)]
    assert crossings(norms[::-1], np.array([1, 2 / 3, 1 / 3, 0, 0])) == [(4.0, 8.0)]  # order does not matter
    assert crossings(norms, np.array([0, 1, 0, 1, 1])) == [(1.0, 2.0), (2.0, 4.0), (4.0, 8.0)]
    assert crossings(norms, np.ones(5)) == []


def test_three_points_make_a_sqrt2_grid_a_2_to_the_eighth_grid():
    runs = pd.DataFrame({"run_id": [f"r{i}" for i in range(4)], "d": 100, "n": 10,
                         "signal_norm": [5.0, 7.0710678, 10.0, 14.142136]})  # fmt: skip
    labels = pd.DataFrame({"run_id": runs["run_id"], "overfits": [True, True, False, False],
                           "selects": [False, False, False, False], "selects_argmax": [True] * 4})  # fmt: skip
    new = refinement_norms(runs, labels, points=3)["signal_norm"].to_numpy()
    assert new == pytest.approx(7.0710678 * 2 ** (np.arange(1, 4) / 8), rel=1e-6)


CLUSTER = Cluster()  # no ceilings


def test_refinement_jobs_train_every_seed_of_a_line_at_the_new_norms():
    rows, curves = [], []
    for seed in (1, 2):
        for m, fitted in ((2.0, 1.0), (4.0, 0.0)):
            rid = f"s{seed}m{m}"
            rows.append({"run_id": rid, "model": "token", "engine": "explicit", "n": 10, "T": 4, "d": 40, "rho": 0.1, "eta": 0.2,
                         "sigma": 1.0, "n_test": 20, "lr": 0.05, "mlp_dim": pd.NA, "seed": seed, "signal_norm": m,
                         "steps": 100, "status": "ok"})  # fmt: skip
            for step in (0, 100):
                curves.append({"run_id": rid, "step": step, "train_acc_noisy": fitted if step else 0.0,
                               "test_loss_normalised": 1.0, "test_sel_relevant": 0.0})  # fmt: skip
    planned = refinement_runs(pd.DataFrame(rows), pd.DataFrame(curves), horizon=100, points=1, log_points=5,
                              criteria=Criteria(**default("synthetic.regime")), setting="atlas_refine")  # fmt: skip
    jobs = pack(planned, "token_atlas_refine", 1, CLUSTER)
    assert list(jobs) == ["token_atlas_refine_00", "token_atlas_refine_01"]  # one (n, T, d, seed) batch each
    runs = [r for rs in jobs.values() for r in rs]
    assert sorted(r["seed"] for r in runs) == [1, 2]
    assert all(r["signal_norm"] == pytest.approx(np.sqrt(8), rel=1e-6) for r in runs)
    assert all(
        r["setting"] == "atlas_refine"
        and r["sweeps"] == ["atlas_refine"]
        and r["steps"] == 100
        and r["mlp_dim"] is None
        for r in runs
    )
