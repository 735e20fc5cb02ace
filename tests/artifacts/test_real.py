"""The real-data half of the artifact table (benign.artifacts.real): its condition and the data
sets' notes it computes from the plan, on a plan written by hand."""

from types import SimpleNamespace

from benign.artifacts import real as entries


def test_real_artifacts_are_built_where_cells_are_planned_and_each_used_data_set_has_its_note():
    real = SimpleNamespace(use=["mnist", "rotten"], datasets={"mnist": {"note": "5000 digits"}, "rotten": {},
                                                              "unused": {"note": "x"}})  # fmt: skip
    plan = SimpleNamespace(config=SimpleNamespace(real=real), real_cells={"mnist_s42_n20": {}})
    assert entries.has_real(plan)
    assert entries.real_notes(plan) == {"mnist": "5000 digits", "rotten": None}
    none = SimpleNamespace(config=SimpleNamespace(real=real), real_cells={})
    assert not entries.has_real(none) and entries.real_notes(none) == {}
    assert {a.name for a in entries.ENTRIES.values()} >= {"real_eta0.1", "real_eta0_0.2", "real_eta_heatmap"}
    assert all(a.when is entries.has_real for a in entries.ENTRIES.values())
