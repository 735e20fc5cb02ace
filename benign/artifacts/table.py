"""The whole artifact table: both halves' entries and input kinds, the index of the README and
docs/artifacts.md (``python -m benign artifacts``), and the check the workflow runs at parse time.

The workflow generates the render rules (workflow/rules/render.smk), ``all_outputs()`` and the
report's categories from :data:`ARTIFACTS`; the tests take their lists from it.
"""

from __future__ import annotations

import pandas as pd

from benign.artifacts import real, synthetic
from benign.artifacts.entry import problems
from benign.plan import schema as config_schema
from benign.synthetic import registry
from benign.tables.common import markdown_table

ARTIFACTS = {**synthetic.ENTRIES, **real.ENTRIES}
KINDS = {**synthetic.KINDS, **real.KINDS}


def index() -> str:
    """The artifact index (README, docs/artifacts.md): what, the paper's number, the files."""
    rows = []
    for a in ARTIFACTS.values():
        ext = "{png,pdf}" if a.kind == "figure" else "{csv,md}"
        for model, paper in a.models.items() or [(None, a.paper)]:
            what = f"{a.title}, {registry.label(model)}" if model else a.title
            rows.append([what, paper or "beyond the paper", f"`{a.folder}/{a.stem(model)}.{ext}`"])
    return markdown_table(pd.DataFrame(rows, columns=["artifact", "paper", "file"])) + "\n"


BEGIN, END = "<!-- artifact index: python -m benign artifacts --write -->", "<!-- end of the artifact index -->"
INDEXED = ("README.md", "docs/artifacts.md")  # the files that hold the index between BEGIN and END


def with_index(text: str) -> str:
    """``text`` with the index between its markers replaced by :func:`index`."""
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{index()}{END}{tail}"


def check(schema: dict | None = None) -> None:
    """Raise ValueError naming every problem of the table, its config keys checked against the
    config ``schema`` (the generated one by default; the workflow calls this at parse time)."""
    if found := problems(ARTIFACTS.values(), KINDS, schema=schema or config_schema.load()):
        raise ValueError("benign/artifacts does not match its functions:\n" + "\n".join(found))
