"""The real half's tables (benign.real.schema): every table is keyed by the run and its cell;
the runs table holds what a run's records summarise and the measured columns; the curves table
holds a record's fields, a row per recorded epoch. A run summarised by hand conforms."""

import dataclasses

import pandas as pd
import pyarrow as pa

from benign.core import schema as core_schema
from benign.core.schema import MEASURED
from benign.real import schema
from benign.real.records import Record, summarise

KEY = ["run_id", "dataset", "n", "eta", "seed"]


def test_every_table_is_keyed_by_the_run_and_its_cell_and_has_each_column_once():
    for table in (schema.REAL_RUNS, schema.REAL_ATTENTION, schema.REAL_CURVES):
        assert set(KEY) <= set(table.names) and len(set(table.names)) == len(table.names)
        assert table.field("n").type == pa.int64() and table.field("eta").type == pa.float64()
    assert set(MEASURED) <= set(schema.REAL_RUNS.names)


def test_the_curves_hold_a_records_fields_and_the_runs_what_the_records_summarise():
    fields = [f.name for f in dataclasses.fields(Record)]
    assert schema.REAL_CURVES.names[-len(fields) :] == fields
    # worked by hand: peak 0.8 at epoch 3, last 0.7; the 2 noisy rows fitted from epoch 10 on
    records = [Record(0, 1.0, 0.5, 0.5, 0.0), Record(3, 0.6, 0.8, 0.9, 0.5), Record(10, 0.5, 0.7, 1.0, 1.0)]
    summary = summarise(records, n_noisy=2)
    assert summary == dict(peak_test_acc=0.8, peak_epoch=3, acc_lost=0.8 - 0.7, noisy_fitted_epoch=10.0,
                           noisy_censored=False)  # fmt: skip
    assert set(summary) <= set(schema.REAL_RUNS.names)
    table = core_schema.to_table(pd.DataFrame([{**dict.fromkeys(schema.REAL_RUNS.names), **summary}]), schema.REAL_RUNS)
    assert table.num_rows == 1 and table.column("peak_epoch").to_pylist() == [3]
