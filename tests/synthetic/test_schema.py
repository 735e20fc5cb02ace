"""The synthetic half's tables (benign.synthetic.schema): a run's parameters are the spec's
columns with the Arrow type of each field, once, in every table keyed by run; the selection
columns name each kind of token the selection module counts."""

import pyarrow as pa

from benign.core.schema import MEASURED
from benign.synthetic import schema, selection, spec


def test_the_run_parameters_are_the_specs_columns_with_their_types():
    assert [name for name, _ in schema.RUN_PARAMETERS] == [f.name for f in spec.FIELDS if f.name in spec.COLUMNS]
    by_name = dict(schema.RUN_PARAMETERS)
    run = spec.RunSpec()
    for name in ("n", "T", "d", "seed", "steps"):
        assert isinstance(getattr(run, name), int) and by_name[name] == pa.int64(), name
    for name in ("rho", "eta", "sigma", "signal_norm"):
        assert by_name[name] == pa.float64(), name
    assert by_name["model"] == pa.string()


def test_every_table_has_each_column_once_and_runs_hold_the_measured_columns():
    for table in (schema.RUNS, schema.CURVES, schema.ATTENTION, schema.ALIGNMENT):
        assert len(set(table.names)) == len(table.names)
    assert set(MEASURED) <= set(schema.RUNS.names)
    assert schema.RUNS.names[0] == "run_id" and {"status", "regime", "code_version"} <= set(schema.RUNS.names)
    assert schema.CURVES.names[:2] == ["run_id", "step"] and set(schema.CURVES.names) >= {n for n, _ in schema.METRICS}


def test_the_flipped_samples_selection_columns_name_each_kind_of_token():
    noisy = [name for name, _ in schema.SELECTION if name.startswith("train_noisy_sel_")]
    assert noisy == [f"train_noisy_sel_{kind}" for kind in selection.KINDS]
    assert all(kind == pa.float64() for _, kind in schema.SELECTION)
