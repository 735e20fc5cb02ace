"""The synthetic half's input kinds: each Parquet kind reads the files of its own schema,
concatenated, and refuses a file of another; each path is a template of benign.core.paths with
the fields its kind says it spans."""

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benign.artifacts import synthetic_inputs
from benign.artifacts.entry import table_file
from benign.synthetic import limit_schema
from benign.synthetic import schema as syn_schema

SCHEMAS = {
    "runs": syn_schema.RUNS,
    "curves": syn_schema.CURVES,
    "attention": syn_schema.ATTENTION,
    "sweep_runs": syn_schema.RUNS,
    "sweep_curves": syn_schema.CURVES,
    "alignment": syn_schema.ALIGNMENT,
    "limit": limit_schema.LIMIT,
    "limit_selection": limit_schema.LIMIT_SELECTION,
}
CSV = {"fits": "regime_boundaries", "regime_model": "regime_model", "along_time": "boundaries_along_time"}


def test_every_kind_is_named_once_as_parquet_csv_or_the_projection_points():
    assert set(synthetic_inputs.KINDS) == set(SCHEMAS) | set(CSV) | {"points"}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_a_parquet_kind_reads_its_schema_and_refuses_another(tmp_path, name):
    kind, schema = synthetic_inputs.KINDS[name], SCHEMAS[name]
    files = [tmp_path / f"{i}.parquet" for i in range(2)]
    for f in files:
        pq.write_table(schema.empty_table(), f)
    assert list(kind.read([str(f) for f in files]).columns) == schema.names
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"x": [1]}), other)
    with pytest.raises(ValueError, match="schema differs"):
        kind.read([str(other)])


@pytest.mark.parametrize("name", sorted(CSV))
def test_a_table_kind_reads_the_csv_of_its_artifact(tmp_path, name):
    kind = synthetic_inputs.KINDS[name]
    assert kind.path == table_file(CSV[name])
    (tmp_path / "t.csv").write_text("a,b\n1,2\n")
    pd.testing.assert_frame_equal(kind.read(str(tmp_path / "t.csv")), pd.DataFrame({"a": [1], "b": [2]}))


def test_the_paths_have_the_fields_their_kinds_span():
    for kind in synthetic_inputs.KINDS.values():
        assert ("{model}" in kind.path) == (kind.per_model or kind.per_sweep), kind.name
        assert ("{sweep}" in kind.path) == kind.per_sweep, kind.name
        if kind.expand:
            assert f"{{{kind.expand}}}" in kind.path, kind.name
