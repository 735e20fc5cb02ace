"""The real-data half's input kinds: the real-data Parquet schemas and the files that hold them.
The render script loads this module, not the entries (benign/artifacts/real.py), so an entry's
edit reruns its own artifact alone."""

from __future__ import annotations

from benign.artifacts.entry import InputKind, parquet
from benign.core import paths
from benign.real import schema as real_schema

KINDS = {
    k.name: k
    for k in (
        InputKind("real_runs", parquet(real_schema.REAL_RUNS), paths.fill(paths.REAL, table="runs")),
        InputKind("real_attention", parquet(real_schema.REAL_ATTENTION), paths.fill(paths.REAL, table="attention")),
        InputKind("real_curves", parquet(real_schema.REAL_CURVES), paths.fill(paths.REAL, table="curves")),
    )
}
