"""The Parquet tables' one reader and writer (benign.core.schema): a frame is conformed to its
schema's columns and types, a file of another schema is refused by name, and the files of one
kind are read back as one frame."""

import pandas as pd
import pyarrow as pa
import pytest

from benign.core import schema

TABLE = pa.schema([("run_id", pa.string()), ("step", pa.int64()), ("loss", pa.float64())])


def test_a_frame_is_written_in_its_schemas_order_and_types_and_read_back(tmp_path):
    frame = pd.DataFrame({"loss": [0.5, 0.25], "extra": ["x", "y"], "step": [1, 2], "run_id": ["a", "b"]})
    schema.write_parquet(frame, TABLE, tmp_path / "t.parquet")
    back = schema.read_parquet(tmp_path / "t.parquet", TABLE)
    assert list(back.columns) == ["run_id", "step", "loss"] and back["step"].dtype == "int64"
    pd.testing.assert_frame_equal(back, frame[["run_id", "step", "loss"]])
    assert not [p for p in tmp_path.iterdir() if p.name != "t.parquet"]  # no temporary file left


def test_missing_columns_and_another_schema_are_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match=r"columns missing for schema: \['loss'\]"):
        schema.to_table(pd.DataFrame({"run_id": ["a"], "step": [1]}), TABLE)
    other = pa.schema([("run_id", pa.string()), ("step", pa.int64())])
    schema.write_parquet(pd.DataFrame({"run_id": ["a"], "step": [1]}), other, tmp_path / "other.parquet")
    with pytest.raises(ValueError, match="other.parquet: schema differs"):
        schema.read_parquet([tmp_path / "other.parquet"], TABLE)


def test_files_are_concatenated_in_order_and_none_is_an_empty_frame(tmp_path):
    for i in range(2):
        schema.write_parquet(pd.DataFrame({"run_id": [f"r{i}"], "step": [i], "loss": [i / 2]}), TABLE,
                             tmp_path / f"{i}.parquet")  # fmt: skip
    both = schema.read_parquet([tmp_path / "0.parquet", tmp_path / "1.parquet"], TABLE)
    assert list(both["run_id"]) == ["r0", "r1"]
    empty = schema.read_parquet([], TABLE)
    assert empty.empty and list(empty.columns) == TABLE.names
