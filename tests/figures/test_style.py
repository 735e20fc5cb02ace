"""The figures' shared style (benign.figures.style): a constant panel states its value."""

import numpy as np

from benign.analysis import metrics
from benign.figures import style
from tests.helpers.frames import heatmap_runs


def test_a_constant_panel_states_its_value_instead_of_a_colour_bar():
    import matplotlib.pyplot as plt

    runs = heatmap_runs()  # train_acc is 1.0 in every cell, train_loss varies
    fig, (ax_const, ax_var) = plt.subplots(1, 2)
    edges = style.edges(np.array([250, 375, 500, 625])), style.edges(np.array([5.0, 7.5, 10.0]))
    style.grid_panel(ax_const, *edges, metrics.cell_grid(runs, "d", "signal_norm", "train_acc"), "train accuracy")
    style.grid_panel(ax_var, *edges, metrics.cell_grid(runs, "d", "signal_norm", "train_loss"), "train loss")
    assert len(fig.axes) == 3  # one colour bar: the varying panel's
    assert [t.get_text() for t in ax_const.texts] == ["train accuracy: 1\nin every cell"]
    assert not ax_var.texts
    plt.close(fig)
