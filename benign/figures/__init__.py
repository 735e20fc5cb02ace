"""One plotting function per artifact (docs/artifacts.md), by half: ``synthetic`` and ``real``,
with the shared style in ``style``. Each takes schema tables and an output
path stem and writes ``<stem>.png`` and ``<stem>.pdf`` atomically.

Runs whose status is not "ok", and cells with a non-finite metric, are never drawn as
numbers: heatmaps mask them in a distinct colour labelled "diverged", line plots leave
such runs out and say so in the footnote.
"""
