"""One plotting function per artifact (docs/artifacts.md; the table of them is
benign/artifacts/), in reading order:

1. ``style.py``: the shared style, notes and colours, and the atomic PNG + PDF writer.
2. ``projection.py``: Figure 1, the token projection.
3. ``dynamics.py``: softmax dynamics (Figures 3 and 6) and delayed generalization.
4. ``heatmaps.py``: the loss heatmaps (Figures 5 and 7).
5. ``atlas.py``: the regime map, the boundary exponents against the horizon, the survival curves.
6. ``max_margin.py``: the attention-SVM check.
7. ``real.py``: Figures 8 and 9, real data.

Each takes schema tables and an output path stem and writes ``<stem>.png`` and ``<stem>.pdf``.
Runs whose status is not "ok", and cells with a non-finite metric, are never drawn as
numbers: heatmaps mask them in a distinct colour labelled "diverged", line plots leave such
runs out and say so in the footnote.

Imports ``analysis``, the halves and ``core``, never ``tables`` (the layer beside it) nor
``plan``; ``artifacts`` and ``cli`` import it.
"""
