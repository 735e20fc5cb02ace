"""The computed limit's tables (benign.synthetic.limit_schema): its kinds of token are the
selection module's, and a line's draw is named by the runs' own parameters with their types."""

from benign.synthetic import limit_schema, selection
from benign.synthetic.schema import RUN_PARAMETERS


def test_the_kinds_of_token_are_the_selection_modules():
    assert limit_schema.KINDS == selection.KINDS
    shares = [f"noisy_sel_{kind}" for kind in selection.KINDS]
    for table in (limit_schema.LIMIT, limit_schema.LIMIT_SELECTION):
        assert set(["clean_sel_relevant", *shares]) <= set(table.names)
    assert limit_schema.LIMIT_SELECTION.names == ["run_id", "clean_sel_relevant", *shares]


def test_a_lines_draw_has_the_runs_parameters_with_their_types():
    runs = dict(RUN_PARAMETERS)
    shared = [name for name in limit_schema.LIMIT.names if name in runs]
    assert len(shared) >= 8 and "signal_norm" in shared and "seed" in shared, shared
    for name in shared:
        assert limit_schema.LIMIT.field(name).type == runs[name], name
    assert len(set(limit_schema.LIMIT.names)) == len(limit_schema.LIMIT.names)
