"""What the figure tests share: a figure's files are whole, and what a figure drew."""

import matplotlib.image as mpimg
import numpy as np
from matplotlib.collections import PathCollection, QuadMesh
from matplotlib.patches import Rectangle


def assert_rendered(stem):
    png, pdf = stem.with_name(stem.name + ".png"), stem.with_name(stem.name + ".pdf")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = mpimg.imread(png)
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100
    assert pdf.read_bytes()[:5] == b"%PDF-" and pdf.stat().st_size > 1000
    assert not list(stem.parent.glob(".*tmp*")), "temporary files left behind"


def panels_of(fig) -> list[dict]:
    """Each panel of ``fig`` (colour bars left out): its title, its lines' (x, y), its scatter
    points, its colour meshes' values, its texts and its bars' heights."""
    return [
        dict(title=ax.get_title(), lines=[(ln.get_xdata(), ln.get_ydata()) for ln in ax.get_lines()],
             points=np.concatenate([c.get_offsets() for c in ax.collections if isinstance(c, PathCollection)]
                                   or [np.empty((0, 2))]),
             meshes=[c.get_array() for c in ax.collections if isinstance(c, QuadMesh)], texts=[t.get_text() for t in ax.texts],
             bars=[p.get_height() for p in ax.patches if isinstance(p, Rectangle)])
        for ax in fig.axes if ax.get_label() != "<colorbar>"
    ]  # fmt: skip
