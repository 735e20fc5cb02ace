"""The atlas's figures (benign.figures.atlas) and tables from sweeps trained here: each figure draws the
data it was given and states the sweep's fixed parameters."""

import numpy as np
import pandas as pd

from benign.analysis import gap_growth
from benign.analysis.theory import regime_fractions
from benign.synthetic import spec
from tests.helpers.figures import assert_rendered


def test_atlas_figures_and_tables_from_trained_sweeps(tmp_path, monkeypatch, drawn):

    from benign.analysis.boundaries import BOUNDARIES
    from benign.analysis.milestones import annotate
    from benign.analysis.one_step import one_step_cells
    from benign.analysis.theory import Criteria, atlas_view
    from benign.figures import atlas as atlas_figures
    from benign.figures import one_step as one_step_figures
    from benign.plan.config_values import Model, read_sweep
    from benign.plan.jobs import sweep_groups
    from benign.plan.schema import default
    from benign.synthetic.trainer import RunSpec, train_runs
    from benign.tables import boundaries as boundary_tables
    from benign.tables import one_step as one_step_tables
    from benign.tables import step_convergence as step_tables
    from benign.tables.gap_dynamics import gap_dynamics
    from benign.tables.generalization_times import generalization_times

    BOUNDARY_NAMES = [name for name, *_ in BOUNDARIES]
    base = {k: v for k, v in dict(RunSpec(d=20, n=10, n_test=20, T=4, steps=200).__dict__, model="token").items()
            if k not in ("seed", "setting", "sweeps")}  # fmt: skip
    sweeps = {"atlas": {"axes": {"d": [20, 40], "n": [6, 10], "signal_norm": [1, 2, 4, 8, 16]}, "seeds": [1, 2],
                        "fixed": {"step_size": 1.5}, "steps": 200, "log_points": 10, "batches_per_job": 1},
              "one_step": {"axes": {"d": [20, 40], "n": [6, 10], "signal_norm": [1, 4, 16]}, "seeds": [1, 2],
                           "steps": 1, "batches_per_job": 1}}  # fmt: skip
    model = Model("token", {"sweeps": sweeps}, base, {k: read_sweep("token", k, v, 200) for k, v in sweeps.items()})
    planned = [run for _, runs, _ in sweep_groups(model, ["atlas"]) for run in runs]
    checked = [
        dict(run, step_size=0.75, steps=400, setting="atlas_convergence", sweeps=["atlas_convergence"])
        for run in planned
        if run["setting"] == "atlas" and run["seed"] == 1
    ]  # the step check, by hand
    runs, curves, _ = train_runs([RunSpec(**run) for run in planned + checked], device="cpu")
    criteria = Criteria(**default("synthetic.regime"))
    view = atlas_view(runs, curves, ["atlas"], [50, 200], default("synthetic.regime"),
                      {"setting": "atlas_convergence", "factor": 2})  # fmt: skip
    atlas, labels = view["runs"], view["labels"]
    assert set(view["convergence"]["d"]) == {20, 40} and set(view["convergence"]["boundary"]) == set(BOUNDARY_NAMES)
    notes = {}
    save = atlas_figures.save
    monkeypatch.setattr(atlas_figures, "save", lambda fig, stem, note: (notes.update({stem.name: note}),
                                                                       save(fig, stem, note)))  # fmt: skip
    step_tables.step_convergence(view["convergence"], atlas, tmp_path / "steps")
    atlas_figures.step_convergence(view["convergence"], atlas, tmp_path / "steps_figure")
    assert_rendered(tmp_path / "steps_figure")
    one_step_tables.one_step_regime(runs, curves, "one_step", criteria, tmp_path / "one")
    one_step_figures.one_step_regime(runs, curves, "one_step", criteria, tmp_path / "one_figure")
    assert_rendered(tmp_path / "one_figure")
    cells = one_step_cells(runs, curves, "one_step", criteria)  # per n, every cell, then the ringed ones
    for panel, (n, at) in zip(drawn["one_figure"], cells.groupby("n"), strict=True):
        assert panel["title"] == f"n = {n:g}"
        ringed = at[at["share"] >= 0.5]
        expected = list(zip(at["d"], at["signal_norm"])) + list(zip(ringed["d"], ringed["signal_norm"]))
        assert sorted(map(tuple, panel["points"])) == sorted((float(d), float(m)) for d, m in expected), n
    fits = boundary_tables.regime_boundaries(atlas, labels, view["convergence"], tmp_path / "rb",
                                             boundary_tables.criteria_text(criteria), 2 ** (1 / 8), 0.05)  # fmt: skip
    assert set(fits["boundary"]) == set(BOUNDARY_NAMES)
    assert set(fits["horizon"]) == {50, 200} and set(fits["time"]) == {75.0, 300.0}
    assert (tmp_path / "rb.md").read_text().startswith("## Synthetic data: fitted regime boundaries")
    atlas_figures.regime_map(atlas, labels, pd.read_csv(tmp_path / "rb.csv"), tmp_path / "map")
    assert_rendered(tmp_path / "map")
    atlas_figures.boundary_scaling(pd.read_csv(tmp_path / "rb.csv"), atlas, tmp_path / "scaling")
    assert_rendered(tmp_path / "scaling")
    annotated = annotate(atlas, curves, criteria)
    atlas_figures.generalization_delay(annotated, curves, tmp_path / "delay", bands=2)
    assert_rendered(tmp_path / "delay")
    table = generalization_times(annotated, curves, tmp_path / "times", bands=2, regime=default("synthetic.regime"))
    assert set(table["time"]) <= {"fit_noisy", "generalized", "delay"} and (tmp_path / "times.md").exists()
    assert set(table["form"]) <= {"snr", "inv_snr2", "log_snr", ""}  # "": a group with every time censored
    growth = gap_dynamics(atlas, labels, curves, tmp_path / "gaps")
    assert (
        set(growth.columns) >= {"g_r2", "g_exponent", "g_test_exponent", "r_slope"} and (tmp_path / "gaps.md").exists()
    )
    atlas_figures.gap_clock(atlas, labels, curves, tmp_path / "clock")
    assert_rendered(tmp_path / "clock")
    # every atlas table and figure states the sweep's fixed parameters: this atlas's step size 1.5, T, rho
    fixed = spec.fixed_text(atlas)
    assert "step_size 1.5" in fixed and "T " in fixed and "rho " in fixed
    for table in ("steps", "rb", "times", "gaps"):
        assert fixed in (tmp_path / f"{table}.md").read_text(), table
    assert set(notes) == {"steps_figure", "map", "scaling", "delay", "clock"}
    assert all(note.endswith(fixed) for note in notes.values()), notes
    # what each atlas figure drew is the data it was given
    cells = regime_fractions(labels, atlas, ["d", "n", "signal_norm"])
    panels = {p["title"]: p for p in drawn["map"]}
    for (horizon, n), at in cells.groupby(["horizon", "n"]):
        got = sorted(map(tuple, panels[f"n = {n:g}, horizon {horizon:,}"]["points"]))
        assert got == sorted(zip(at["d"].astype(float), at["signal_norm"].astype(float))), (horizon, n)
    rb = pd.read_csv(tmp_path / "rb.csv")
    for panel, (name, rows) in zip(drawn["steps_figure"], view["convergence"].groupby("boundary", sort=False)):
        assert panel["title"].startswith(name)
        got = sorted(
            (float(x), float(y)) for xs, ys in panel["lines"][1:] for x, y in zip(xs, ys)
        )  # past the bracket line
        assert got == sorted(zip(rows["d"].astype(float), rows["largest_shift"].fillna(0.0).astype(float))), name
    for i, (name, rows) in enumerate(rb.groupby("boundary", sort=False)):
        a_panel = drawn["scaling"][4 * i + 1]  # per boundary: the decade slopes, then a, b and e
        assert a_panel["title"] == f"{name}: exponent of d, law (i)"
        rows = rows.sort_values("horizon")
        assert any(np.array_equal(x, rows["horizon"].to_numpy(float)) and np.allclose(y, rows["a"], equal_nan=True)
                   for x, y in a_panel["lines"]), name  # fmt: skip
    growth = gap_growth.benign_growth(atlas, curves, labels[labels["horizon"] == labels["horizon"].max()])
    band = growth[~growth["saturated"].astype(bool)]
    assert len(drawn["clock"][0]["lines"]) == len(band) + 1  # a curve per unsaturated benign run, and slope 1
    for panel in drawn["delay"]:  # one Kaplan-Meier curve per SNR band with runs, each a fraction reached
        assert 1 <= len(panel["lines"]) <= 2 and all(0 <= y.min() and y.max() <= 1 for _, y in panel["lines"])
