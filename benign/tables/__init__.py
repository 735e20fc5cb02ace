"""Tables (docs/artifacts.md), by half: ``synthetic`` and ``real`` (shared helpers in ``common``),
each written as ``<stem>.csv`` (numbers) and ``<stem>.md`` (formatted), atomically.

Seed statistics use only runs with status "ok" (the others are counted in ``failed``);
the std is the population std (ddof = 0), as in the paper. A NaN among ok runs is not
skipped: it propagates to the cell, which Markdown shows as "—".
"""
