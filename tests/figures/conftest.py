from pathlib import Path

import pytest

from benign.figures import atlas, dynamics, heatmaps, max_margin, one_step, projection, style
from benign.figures import real as real_figures
from tests.helpers.figures import panels_of


@pytest.fixture
def drawn(monkeypatch):
    """What each figure drew, read off the figure before it is saved: {stem name: its panels}
    (``tests.helpers.figures.panels_of``)."""
    saved = {}
    save = style.save

    def keep(fig, stem, note):
        saved[Path(stem).name] = panels_of(fig)
        save(fig, stem, note)

    for module in (projection, dynamics, heatmaps, atlas, max_margin, one_step):
        monkeypatch.setattr(module, "save", keep)
    monkeypatch.setattr(real_figures.style, "save", keep)
    return saved
