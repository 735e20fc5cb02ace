"""The loss heatmaps (benign.figures.heatmaps, Figures 5 and 7): each panel's colours are its metric's
mean per cell, its curves the fitted or pinned boundaries."""

import numpy as np
import pandas as pd
import pytest

from benign.analysis import metrics
from benign.figures import heatmaps
from tests.helpers.figures import assert_rendered
from tests.helpers.frames import heatmap_runs


def test_loss_heatmap(tmp_path, drawn):
    """Four panels, each coloured by its metric's mean over seeds per (d, ||mu||) cell, with the
    theory's two curves at the pinned constants."""
    runs = heatmap_runs().assign(model="encoder")
    heatmaps.loss_heatmap(runs, tmp_path / "heat", c1=3.0, c2=1.0, setting="heatmap", model="encoder")
    assert_rendered(tmp_path / "heat")
    panels = drawn["heat"]
    assert [p["title"] for p in panels] == ["final train loss", "final test loss", "final train accuracy (noisy labels)",
                                            "final test accuracy"]  # fmt: skip
    n = int(runs["n"].iloc[0])
    for panel, metric in zip(panels, ("train_loss", "test_loss", "train_acc", "test_acc")):
        grid = metrics.cell_grid(runs, "d", "signal_norm", metric)
        assert np.ma.allequal(panel["meshes"][0], grid.values)
        (d1, y1), (d2, y2) = panel["lines"]
        assert np.allclose(y1, 3.0 * np.sqrt(d1 / n)) and np.allclose(y2, 1.0 * d2**0.25)


def boundary_fits_table(horizon=1000):
    base = dict(horizon=horizon, theory_b=np.nan)
    return pd.DataFrame(
        [
            dict(base, boundary="not overfitting", c=0.5, a=0.8, b=-0.4, c_theory=9.0, theory_a=0.5, theory_b=-0.5),
            dict(
                base,
                boundary="selection (harmful below)",
                c=2.0,
                a=np.nan,
                b=np.nan,
                c_theory=np.nan,
                theory_a=0.25,
                theory_b=0.0,
            ),  # fmt: skip
        ]
    )


def test_heatmap_curves_fitted_pinned_or_none():
    fits = boundary_fits_table()
    curves = heatmaps._heatmap_curves(fits, 1000, None, None)
    # the not-overfitting fit and its theory curve; the harmful fit has no exponent and no constant
    assert [(c["c"], c["a"], c["b"], c["ls"]) for c in curves] == [(0.5, 0.8, -0.4, "-"), (9.0, 0.5, -0.5, "--")]
    pinned = heatmaps._heatmap_curves(fits, 1000, 3.0, 1.5)
    assert [(c["c"], c["a"], c["b"], c["ls"]) for c in pinned] == [
        (0.5, 0.8, -0.4, "-"),
        (3.0, 0.5, -0.5, "--"),
        (1.5, 0.25, 0.0, "--"),
    ]
    assert heatmaps._heatmap_curves(fits, 50, None, None) == []  # no fit at this horizon
    assert heatmaps._heatmap_curves(None, 1000, None, None) == []


def test_loss_heatmap_with_fits(tmp_path):
    runs = heatmap_runs().assign(model="token", steps=1000)
    heatmaps.loss_heatmap(runs, tmp_path / "heat", fits=boundary_fits_table(), model="token")
    assert_rendered(tmp_path / "heat")


def test_loss_heatmap_needs_runs(tmp_path):
    with pytest.raises(ValueError):
        heatmaps.loss_heatmap(heatmap_runs(), tmp_path / "heat", c1=3.0, c2=1.0, setting="other")
