"""The regime-boundaries table (benign.tables.boundaries), fitted at each horizon of a simulated
grid with a known law (tests/analysis/test_boundaries.py)."""

import numpy as np
import pandas as pd

from benign.tables import boundaries as tables
from tests.helpers.atlas_sim import LINES, NORMS


def test_the_table_fits_each_boundary_at_each_horizon(tmp_path):
    """On a simulated atlas of the default grid with the theory's exponents: one row per boundary
    and horizon, the crossings counted, the exponents inside their intervals, the laws compared,
    a slope per decade, and the words."""
    rng = np.random.default_rng(1)
    rows, frames = [], []
    stars = {}
    for d, n in LINES:
        for seed in (1, 2):
            no = 4.0 * (d / n) ** 0.5 * np.exp(0.1 * rng.standard_normal())
            sel = 1.5 * d**0.25 * np.exp(0.1 * rng.standard_normal())
            stars[(d, n, seed)] = (no, sel)
            norms = set(NORMS) | {star * f for star in (no, sel) for f in (0.97, 1.03)}  # refined around each
            rows += [{"d": d, "n": n, "seed": seed, "signal_norm": x} for x in sorted(norms)]
    runs = pd.DataFrame(rows).assign(setting="atlas", steps=10000, step_size=5.0, sigma=1.0)
    runs["sweeps"] = [["atlas"]] * len(runs)
    runs["run_id"] = [f"r{i}" for i in range(len(runs))]
    no, sel = np.array([stars[(r.d, r.n, r.seed)] for r in runs.itertuples()]).T
    for horizon in (1000, 10000):
        frames.append(pd.DataFrame({"run_id": runs["run_id"], "horizon": horizon, "overfits": runs["signal_norm"] <= no,
                                    "selects": runs["signal_norm"] > sel,
                                    "selects_argmax": runs["signal_norm"] > sel / 2,
                                    "selects_hardmax": runs["signal_norm"] > sel / 2, "r": 0.5}))  # fmt: skip
    labels = pd.concat(frames, ignore_index=True)
    table = tables.regime_boundaries(runs, labels, pd.DataFrame(), tmp_path / "rb", "test", 2 ** (1 / 4), 0.05)
    assert len(table) == 8 and set(table["crossings"]) == {len(LINES) * 2}
    assert set(table["horizon"]) == {1000, 10000}
    for row in table.itertuples():
        assert row.a_low < row.a < row.a_high and row.b_low < row.b < row.b_high
        assert row.out_of_sample == "beats the base rate" and row.heldout_power > row.heldout_none
    # the labels are the same at both horizons: every boundary has settled, by no shift at all
    later = table[table["horizon"] == 10000]
    assert set(later["settle_verdict"]) == {"settled"} and set(later["settle_drift"]) == {0.0}
    md = (tmp_path / "rb.md").read_text()
    for words in ("Model comparison", "Local slopes per decade", "d 1e+06 to 1e+07", "extrapolated", "Settled from"):
        assert words in md
