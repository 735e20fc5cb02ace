"""The boundaries along time (benign/analysis/along_time.py; its table and figure: tests/tables/test_along_time.py) on hand-made
labels: lines whose selection crossings lie on the first step's law at step 1 and 0.8 times it
later, and whose other boundaries follow a known law."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from benign.analysis import first_step
from benign.analysis.along_time import boundary_path
from benign.analysis.theory import Criteria

CRITERIA = Criteria(fit_threshold=0.5, loss_threshold=0.5, rate_threshold=0.5, head_acc_threshold=0.9,
                    hardmax_threshold=0.25)  # fmt: skip
LINES = [(1e3, 10), (1e4, 10), (1e4, 20), (1e5, 20), (1e6, 40)]
FACTOR = {1: 1.0, 10: 0.8, 100: 0.8}  # the selection crossings over the law's, per horizon


def atlas() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Runs on a factor-2^(1/8) grid around each line's crossings (4 seeds, staggered), and their
    labels at steps 1, 10 and 100."""
    runs, labels = [], []
    for d, n in LINES:
        law = first_step.boundary("selects_hardmax", d, n, criteria=CRITERIA)
        for seed in range(4):
            for k in range(-24, 25):
                m = law * 2 ** (k / 8 + seed / 32)
                run = f"d{d:g}n{n}s{seed}k{k}"
                runs.append(dict(run_id=run, d=d, n=n, seed=seed, signal_norm=m, T=8, rho=0.1, eta=0.2, sigma=1.0,
                                 step_size=5.0))  # fmt: skip
                for h, factor in FACTOR.items():
                    sel = m > law * factor
                    labels.append(dict(run_id=run, horizon=h, selects_argmax=sel, selects_hardmax=sel,
                                       selects=m > 0.5 * math.sqrt(d), overfits=m < 2 * math.sqrt(d / n)))  # fmt: skip
    return pd.DataFrame(runs), pd.DataFrame(labels)


def test_the_path_finds_the_law_at_step_1_and_the_shift_after():
    runs, labels = atlas()
    path = boundary_path(runs, labels, CRITERIA).set_index(["label", "horizon"])
    step = math.log(2) / 32  # the seeds' staggered resolution
    for label in first_step.LABELS:
        assert abs(path.loc[(label, 1), "shift_from_law"]) < 2 * step
        assert path.loc[(label, 10), "shift_from_law"] == pytest.approx(math.log(0.8), abs=2 * step)
        law = path.loc[(label, 1), ["law_a", "law_b"]]
        assert law["law_a"] == pytest.approx(path.loc[(label, 1), "a"], abs=0.01)  # the law's crossings, refitted
        assert path.loc[(label, 10), "drift"] == pytest.approx(math.log(0.8), abs=2 * step)  # per decade: 1 decade
        assert path.loc[(label, 100), "drift_verdict"] == "settled"
    assert path.loc[("selects", 10), "a"] == pytest.approx(0.5, abs=0.01)
    assert path.loc[("selects", 10), "b"] == pytest.approx(0.0, abs=0.05)
    assert np.isnan(path.loc[("overfits", 10), "law_a"])  # the law is the selection labels' alone
