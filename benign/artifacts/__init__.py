"""The artifact table, the top layer: every figure and table the workflow draws, what each reads
and the function that draws it.

- ``entry.py``: what an entry is (:class:`~benign.artifacts.entry.Artifact`, its input kinds,
  views and params) and the check of each call against its function's signature.
- ``synthetic_inputs.py``, ``real_inputs.py``: each half's input kinds (how its files are read,
  where they are). A render job loads its half's kinds and the modules its entry's recipe names
  (``Artifact.recipe``), never the entries: so an edit to one entry reruns that artifact alone.
- ``synthetic.py``, ``real.py``: each half's entries. A half imports only its own figures,
  tables, analysis and Parquet schemas, so no render's fingerprint holds a module of the other.
- ``table.py``: both halves together, the artifact index, the workflow's parse-time check.

May import every other package of ``benign`` but ``cli``; only ``cli``, the workflow and the
tests import it. It is the only code that names tables and figures. This file imports nothing,
so that loading one half loads nothing of the other.
"""
