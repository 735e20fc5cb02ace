"""The Parquet tables' one reader and writer, and the columns every half's tables share.

Each half defines its tables' columns (benign.synthetic.schema, benign.real.schema); every
Parquet writer and reader goes through here, which checks a file against its schema.
"""

from __future__ import annotations

import os

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from benign.core.io import atomic_path

# The job's measured peaks (the same on every run of a job: one job is one process), in MB:
# the process's maximum resident set size, and the maximum memory allocated on its CUDA device
# (null on CPU). docs/cluster.md compares them with the workflow's estimates.
PEAK_MEMORY = [("peak_rss_mb", pa.float64()), ("peak_cuda_mb", pa.float64())]
# Columns that measure the machine, not the science: the only ones that may differ between
# two runs of the same config and seed.
MEASURED = ("wall_time_s", "peak_rss_mb", "peak_cuda_mb")


def to_table(df: pd.DataFrame, schema: pa.Schema) -> pa.Table:
    """Conform a DataFrame to ``schema`` (column order, types); missing columns are an error."""
    missing = [name for name in schema.names if name not in df.columns]
    if missing:
        raise ValueError(f"columns missing for schema: {missing}")
    return pa.Table.from_pandas(df[schema.names], schema=schema, preserve_index=False)


def write_parquet(df: pd.DataFrame, schema: pa.Schema, path: str | os.PathLike) -> None:
    """Write ``df`` atomically: a temporary file in the same folder, then rename."""
    write_table_atomic(to_table(df, schema), path)


def write_table_atomic(table: pa.Table, path: str | os.PathLike) -> None:
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def read_parquet(paths, schema: pa.Schema) -> pd.DataFrame:
    """Read and concatenate Parquet files, checking each against ``schema``."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    tables = []
    for p in paths:
        t = pq.read_table(p)
        if not t.schema.equals(schema, check_metadata=False):
            raise ValueError(f"{p}: schema differs from the expected one:\n{t.schema}\nexpected:\n{schema}")
        tables.append(t)
    if not tables:
        return schema.empty_table().to_pandas()
    return pa.concat_tables(tables).to_pandas()
