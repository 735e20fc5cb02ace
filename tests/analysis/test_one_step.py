"""The one-step map (benign/analysis/one_step.py) on hand-made runs: d* is the least d from which
the first step fits the flipped labels on half the seeds, at every larger d too, and a seed whose
flipped labels were fitted before any step does not count."""

import numpy as np
import pandas as pd
import pytest

from benign.analysis.one_step import one_step_cells, one_step_map
from benign.plan.schema import default

CRITERIA = default("synthetic.regime")  # fit_threshold 1/2


def hand_runs(fitted_after: dict, fitted_before: dict, norm: float = 8.0):
    """Two seeds per d at one ||mu||, n 10: {d: (seed 1's, seed 2's) share fitted after the step},
    and before it."""
    runs, curves = [], []
    for d, shares in fitted_after.items():
        for seed, (after, before) in enumerate(zip(shares, fitted_before[d]), start=1):
            rid = f"d{d}s{seed}"
            runs.append({"run_id": rid, "status": "ok", "sweeps": ["one_step"], "n": 10, "d": d, "signal_norm": norm,
                         "seed": seed, "train_acc_noisy": after, "step_size": 0.005 * d, "lr": 0.005,
                         "snr": norm / np.sqrt(d)})  # fmt: skip
            curves += [{"run_id": rid, "step": 0, "train_acc_noisy": before},
                       {"run_id": rid, "step": 1, "train_acc_noisy": after}]  # fmt: skip
    return pd.DataFrame(runs), pd.DataFrame(curves)


def test_a_cell_counts_the_seeds_the_first_step_fits():
    runs, curves = hand_runs({1e3: (0.0, 1.0), 1e4: (1.0, 1.0)}, {1e3: (0.0, 0.0), 1e4: (0.0, 0.75)})
    cells = one_step_cells(runs, curves, "one_step", CRITERIA).set_index("d")
    assert cells.loc[1e3, ["fitted", "share", "share_before", "seeds"]].tolist() == [0.5, 0.5, 0.0, 2]
    # at d 10^4 seed 2 fitted them before any step: the step is not credited with it
    assert cells.loc[1e4, ["fitted", "share", "share_before"]].tolist() == [1.0, 0.5, 0.5]
    assert cells.loc[1e4, "step_size"] == pytest.approx(50.0) and cells.loc[1e4, "lr"] == 0.005


def test_d_star_is_the_least_d_from_which_every_larger_d_fits_on_half_the_seeds():
    after = {1e3: (0.0, 0.0), 1e4: (1.0, 0.0), 1e5: (0.0, 0.0), 1e6: (1.0, 0.5), 1e7: (1.0, 1.0)}
    runs, curves = hand_runs(after, {d: (0.0, 0.0) for d in after})
    row = one_step_map(one_step_cells(runs, curves, "one_step", CRITERIA)).iloc[0]
    assert row["d_star"] == 1e6  # 1e4 fits on half the seeds, but 1e5 does not: from 1e6 on
    assert row["step_size_star"] == pytest.approx(5000) and row["snr_sqrt_n_star"] == pytest.approx(8 / 1e3 * 10**0.5)
    assert (row["d_max"], row["fitted_at_d_max"], row["seeds"]) == (1e7, 1.0, 2)
    never = hand_runs({1e3: (0.0, 0.0)}, {1e3: (0.0, 0.0)})
    assert np.isnan(one_step_map(one_step_cells(*never, "one_step", CRITERIA)).iloc[0]["d_star"])
