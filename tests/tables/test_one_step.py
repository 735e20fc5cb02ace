"""The one-step table (benign/tables/one_step.py) on the hand-made runs of
tests/analysis/test_one_step.py: its row is the map's, and its words say where the head fitted
flipped labels before any step."""

import pytest

from benign.plan.schema import default
from benign.tables.one_step import one_step_regime
from tests.analysis.test_one_step import hand_runs

CRITERIA = default("synthetic.regime")  # fit_threshold 1/2


def test_d_star_is_where_the_first_step_fits_from_then_on(tmp_path):
    after = {1e3: (0.0, 0.0), 1e4: (1.0, 0.0), 1e5: (0.0, 0.0), 1e6: (1.0, 0.5), 1e7: (1.0, 1.0)}
    before = {d: (0.0, 0.0) for d in after}
    runs, curves = hand_runs(after, before)
    row = one_step_regime(runs, curves, "one_step", CRITERIA, tmp_path / "one").iloc[0]
    assert row["d_star"] == 1e6  # 1e4 fits on half the seeds, but 1e5 does not: from 1e6 on
    assert row["step_size_star"] == pytest.approx(5000) and row["snr_sqrt_n_star"] == pytest.approx(8 / 1e3 * 10**0.5)


def test_flipped_labels_fitted_before_any_step_do_not_count(tmp_path):
    after = {1e3: (1.0, 1.0), 1e4: (1.0, 1.0)}
    before = {1e3: (0.5, 0.5), 1e4: (0.0, 0.0)}  # at d 1e3 the head already fitted them at initialisation
    runs, curves = hand_runs(after, before)
    row = one_step_regime(runs, curves, "one_step", CRITERIA, tmp_path / "one").iloc[0]
    assert row["d_star"] == 1e4 and row["fitted_before_any_step"] == pytest.approx(0.5)
    assert "before any step" in (tmp_path / "one.md").read_text()
