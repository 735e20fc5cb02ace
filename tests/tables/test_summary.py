"""The summary page (benign/tables/summary.py): each of its sections reads a table of the
artifact table, the named settings and the step check first."""


def test_every_summary_section_reads_a_table_of_the_artifact_table():
    from benign.artifacts.table import ARTIFACTS
    from benign.tables.summary import SECTIONS

    tables = {a.name for a in ARTIFACTS.values() if a.kind == "table"}
    assert {name for name, _, _ in SECTIONS} <= tables
    assert [h for _, h, _ in SECTIONS][:2] == ["Named settings", "The atlas's step check (step halved, steps doubled)"]
