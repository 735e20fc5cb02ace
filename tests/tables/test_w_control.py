"""The W-frozen control's table (benign.tables.w_control), rendered from trained twins of the
atlas's runs (tests/analysis/test_w_control.py)."""

import math

import numpy as np
import pandas as pd

from benign.analysis.boundaries import BOUNDARIES
from benign.analysis.w_control import COLUMNS
from benign.plan.schema import default
from benign.synthetic.trainer import train_runs
from benign.tables.w_control import w_control
from tests.analysis.test_w_control import twins


def test_the_table_renders_from_runs(tmp_path):
    trained, frozen = twins([2.0, 4.0, 8.0, 16.0, 32.0], [1, 2], steps=100, log_points=8)
    runs, curves, _ = train_runs(trained + frozen, device="cpu")
    of = lambda model: (
        runs[runs["model"] == model],
        curves[curves["run_id"].isin(runs.loc[runs["model"] == model, "run_id"])],
    )  # noqa: E731
    table = w_control(*of("token"), *of("token_p_w0"), ["atlas"], "atlas_w0", [37, 100], default("synthetic.regime"),
                      tmp_path / "wc")  # fmt: skip
    assert pd.read_csv(tmp_path / "wc.csv").columns.tolist() == COLUMNS
    assert len(table) == len(BOUNDARIES) * 2 and set(table["horizon"]) == {37, 100}
    assert (table["lines"] == 2).all() and (table["seeds"] == 2).all()
    assert np.isclose(table["grid_step"], math.log(2)).all() and (table["time"] == 5 * table["horizon"]).all()
    text = (tmp_path / "wc.md").read_text()
    assert text.startswith("## Synthetic data: what training W does to the atlas's boundaries")
    assert (
        "| Boundary | d | n | Horizon (time) | Lines paired (of the control's; closed in both) |" in text
        and "### Over every d" in text
    )
