"""The whole artifact table (benign.artifacts.table): both halves' entries and kinds, the index
written into the README and docs/artifacts.md, and the check the workflow runs at parse time."""

from dataclasses import replace

import pytest

from benign.artifacts import real, synthetic, table


def test_the_table_is_both_halves_and_their_kinds():
    assert table.ARTIFACTS == {**synthetic.ENTRIES, **real.ENTRIES}
    assert set(table.KINDS) == set(synthetic.KINDS) | set(real.KINDS)


def test_the_index_has_a_row_per_artifact_and_model_with_its_paper_number_and_files():
    rows = table.index().splitlines()
    assert rows[:2] == ["| artifact | paper | file |", "|---|---|---|"]
    expected = sum(len(a.models) or 1 for a in table.ARTIFACTS.values())
    assert len(rows) == 2 + expected
    assert (
        "| real data, eta = 0.1: train loss, test accuracy, baseline | Table 2 | `results/tables/real_eta0.1.{csv,md}` |"
        in rows
    )
    assert any(r.startswith("| softmax dynamics, ") and "| Figure 3 | `results/figures/softmax_dynamics.{png,pdf}` |" in r
               for r in rows)  # fmt: skip


def test_the_index_replaces_only_what_lies_between_its_markers():
    text = f"before\n{table.BEGIN}\nold rows\n{table.END}\nafter\n"
    assert table.with_index(text) == f"before\n{table.BEGIN}\n{table.index()}{table.END}\nafter\n"


def test_the_check_names_the_entry_and_its_problem(monkeypatch):
    table.check()  # the table as it is has none
    key, entry = next(iter(table.ARTIFACTS.items()))
    monkeypatch.setitem(table.ARTIFACTS, key, replace(entry, when=lambda config: True))
    with pytest.raises(
        ValueError, match=rf"{entry.name} \({entry.kind}\): condition .*<lambda>: no value for its argument"
    ):
        table.check()
