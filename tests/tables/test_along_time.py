"""The boundaries-along-time table and its figure (benign.tables.along_time), from a hand-made atlas
whose crossings shift with time (tests/analysis/test_along_time.py)."""

from __future__ import annotations

import numpy as np

from benign.figures import atlas as atlas_figures
from benign.tables.along_time import boundaries_along_time
from tests.analysis.test_along_time import CRITERIA, atlas


def test_the_table_and_the_figure_show_the_path(tmp_path, monkeypatch):
    runs, labels = atlas()
    table = boundaries_along_time(runs, labels, CRITERIA, tmp_path / "along")
    text = (tmp_path / "along.md").read_text()
    assert "within the resolution" in text and "First step's law over the design" in text
    drawn = {}
    save = atlas_figures.save

    def keep(fig, stem, note):
        shift_panel = fig.axes[3]
        drawn.update(panels=len([ax for ax in fig.axes if ax.get_title()]), lines=shift_panel.get_lines())
        save(fig, stem, note)

    monkeypatch.setattr(atlas_figures, "save", keep)
    atlas_figures.boundaries_along_time(table, runs, tmp_path / "figure")
    assert (tmp_path / "figure.png").exists() and drawn["panels"] == 4
    hard = table[table["label"] == "selects_hardmax"]
    plotted = [line.get_ydata() for line in drawn["lines"] if len(line.get_ydata()) == len(hard)]
    assert any(np.allclose(y, hard["shift_from_law"].to_numpy()) for y in plotted)
