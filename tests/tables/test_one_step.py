"""The one-step map (benign/analysis/one_step.py, benign/tables/one_step.py) on hand-made runs: d*
is the least d from which the first step fits the flipped labels on half the seeds, at every
larger d too, and a seed whose flipped labels were fitted before any step does not count."""

import numpy as np
import pandas as pd
import pytest

from benign.plan.schema import default
from benign.tables.one_step import one_step_regime

CRITERIA = default("synthetic.regime")  # fit_threshold 1/2


def _runs(fitted_after: dict, fitted_before: dict, norm: float = 8.0):
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


def test_d_star_is_where_the_first_step_fits_from_then_on(tmp_path):
    after = {1e3: (0.0, 0.0), 1e4: (1.0, 0.0), 1e5: (0.0, 0.0), 1e6: (1.0, 0.5), 1e7: (1.0, 1.0)}
    before = {d: (0.0, 0.0) for d in after}
    runs, curves = _runs(after, before)
    row = one_step_regime(runs, curves, "one_step", CRITERIA, tmp_path / "one").iloc[0]
    assert row["d_star"] == 1e6  # 1e4 fits on half the seeds, but 1e5 does not: from 1e6 on
    assert row["step_size_star"] == pytest.approx(5000) and row["snr_sqrt_n_star"] == pytest.approx(8 / 1e3 * 10**0.5)


def test_flipped_labels_fitted_before_any_step_do_not_count(tmp_path):
    after = {1e3: (1.0, 1.0), 1e4: (1.0, 1.0)}
    before = {1e3: (0.5, 0.5), 1e4: (0.0, 0.0)}  # at d 1e3 the head already fitted them at initialisation
    runs, curves = _runs(after, before)
    row = one_step_regime(runs, curves, "one_step", CRITERIA, tmp_path / "one").iloc[0]
    assert row["d_star"] == 1e4 and row["fitted_before_any_step"] == pytest.approx(0.5)
    assert "before any step" in (tmp_path / "one.md").read_text()
