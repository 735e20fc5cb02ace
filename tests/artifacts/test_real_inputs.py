"""The real half's input kinds: each reads the gathered table of its own schema and refuses a
file of another, at the path where aggregate_real writes it."""

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benign.artifacts import real_inputs
from benign.core import paths
from benign.real import schema as real_schema

SCHEMAS = {
    "real_runs": (real_schema.REAL_RUNS, "runs"),
    "real_attention": (real_schema.REAL_ATTENTION, "attention"),
    "real_curves": (real_schema.REAL_CURVES, "curves"),
}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_a_kind_reads_its_schema_at_its_table_and_refuses_another(tmp_path, name):
    kind, (schema, table) = real_inputs.KINDS[name], SCHEMAS[name]
    assert kind.path == paths.fill(paths.REAL, table=table)
    pq.write_table(schema.empty_table(), tmp_path / "t.parquet")
    assert list(kind.read(str(tmp_path / "t.parquet")).columns) == schema.names
    pq.write_table(pa.table({"x": [1]}), tmp_path / "other.parquet")
    with pytest.raises(ValueError, match="schema differs"):
        kind.read(str(tmp_path / "other.parquet"))


def test_every_kind_is_checked():
    assert set(real_inputs.KINDS) == set(SCHEMAS)
