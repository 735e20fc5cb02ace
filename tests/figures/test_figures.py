from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PathCollection, QuadMesh

from benign.analysis import gap_growth, metrics
from benign.analysis.theory import regime_fractions
from benign.figures import dynamics, heatmaps, projection, style
from benign.figures import real as real_figures
from benign.real import schema as real_schema
from benign.synthetic import schema as syn_schema
from benign.synthetic import spec
from benign.synthetic.data_model import DataSpec
from benign.synthetic.token_projection import token_projection
from tests.helpers import frames
from tests.helpers.frames import heatmap_runs

rng = np.random.default_rng(0)


def assert_rendered(stem):
    png, pdf = stem.with_name(stem.name + ".png"), stem.with_name(stem.name + ".pdf")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = mpimg.imread(png)
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100
    assert pdf.read_bytes()[:5] == b"%PDF-" and pdf.stat().st_size > 1000
    assert not list(stem.parent.glob(".*tmp*")), "temporary files left behind"


@pytest.fixture
def drawn(monkeypatch):
    """What each figure drew, read off the figure before it is saved: {stem name: its panels},
    each panel its title, its lines' (x, y), its scatter points and its colour meshes' values."""
    from benign.figures import atlas, max_margin, one_step

    saved = {}
    save = style.save

    def keep(fig, stem, note):
        panels = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
        saved[Path(stem).name] = [
            dict(title=ax.get_title(), lines=[(ln.get_xdata(), ln.get_ydata()) for ln in ax.get_lines()],
                 points=np.concatenate([c.get_offsets() for c in ax.collections if isinstance(c, PathCollection)]
                                       or [np.empty((0, 2))]),
                 meshes=[c.get_array() for c in ax.collections if isinstance(c, QuadMesh)], texts=[t.get_text() for t in ax.texts])
            for ax in panels
        ]  # fmt: skip
        save(fig, stem, note)

    for module in (projection, dynamics, heatmaps, atlas, max_margin, one_step):
        monkeypatch.setattr(module, "save", keep)
    monkeypatch.setattr(real_figures.style, "save", keep)
    return saved


def test_token_projection(tmp_path, drawn):
    """Two rows (train, test) of one panel per setting; each panel draws exactly the tokens its
    setting's inputs of that split select, and names the split's accuracy."""
    from benign.synthetic.token_projection import projection_accuracy

    cfg = DataSpec(n=20, T=6, d=300, rho=0.2, signal_norm=20.0, eta=0.2, n_test=20, seed=1)
    points = token_projection(cfg, {"harmful": 1.0, "benign": 0.06, "not_overfitting": 0.001})
    projection.token_projection(points, cfg, tmp_path / "fig1")
    assert_rendered(tmp_path / "fig1")
    panels, accuracy = drawn["fig1"], projection_accuracy(points).set_index("setting")
    settings = list(accuracy.index)
    assert len(panels) == 2 * len(settings) == 6
    for k, panel in enumerate(panels):
        split, setting = ("train", "test")[k // 3], settings[k % 3]
        sub = points[(points["setting"] == setting) & (points["split"] == split)]
        assert sorted(map(tuple, panel["points"])) == sorted(zip(sub["proj_neg"], sub["proj_pos"]))
        assert panel["title"].endswith(f"{split}: accuracy {accuracy.loc[setting, f'{split}_acc']:.2f}")


def attention_rows(run_id, T, samples=4, noisy=(1, 2), unfitted=(2,), steps=range(0, 60, 10), cls=False, value=None):
    tokens = np.arange(-1 if cls else 0, T)
    rows = []
    for step in steps:
        for sample in range(samples):
            logits = rng.normal(size=tokens.size) + step / 10 * (tokens == 0)
            probs = np.exp(logits) / np.exp(logits).sum() if value is None else np.full(tokens.size, value)
            rows += [
                dict(
                    run_id=run_id,
                    step=step,
                    sample=sample,
                    token=int(t),
                    probability=float(p),
                    noisy=sample in noisy,
                    fitted=sample not in unfitted or step < 20,
                )  # fmt: skip
                for t, p in zip(tokens, probs)
            ]
    return rows


def test_pick_samples_by_kind_at_the_last_step():
    trace = frames.conform(attention_rows("r", T=4, samples=5, noisy=(1, 2, 4), unfitted=(2, 4)), syn_schema.ATTENTION)
    # sample 2 is fitted before step 20 and not at the end: judged at the last step
    assert dynamics.pick_samples(trace) == {"clean": 0, "noisy, fitted": 1, "noisy, not fitted": 2}
    every_noisy_fitted = frames.conform(attention_rows("r", T=4, unfitted=()), syn_schema.ATTENTION)
    assert dynamics.pick_samples(every_noisy_fitted)["noisy, not fitted"] is None
    # the figure takes the lowest seed whose run has every kind, else the lowest seed
    runs = frames.runs([dict(run_id="s1", seed=1), dict(run_id="s2", seed=2), dict(run_id="s3", seed=3)])
    att = frames.conform(attention_rows("s1", T=4, unfitted=()) + attention_rows("s2", T=4)
                         + attention_rows("s3", T=4), syn_schema.ATTENTION)  # fmt: skip
    assert dynamics._run_with_every_kind(runs, att)[0]["seed"] == 2
    assert dynamics._run_with_every_kind(runs.iloc[:1], att)[0]["seed"] == 1


@pytest.mark.parametrize("model", ["token", "encoder"])
def test_softmax_dynamics(tmp_path, model, drawn):
    settings = {"benign": (2000, 20.0), "harmful": (4500, 5.0), "not_overfitting": (1000, 80.0)}
    settings_index = {setting: i for i, setting in enumerate(settings)}
    run_rows, att = [], []
    for i, (setting, (d, norm)) in enumerate(settings.items()):
        run_rows.append(dict(run_id=f"{model}{i}", model=model, setting=setting, d=d, signal_norm=norm, seed=42))
        att += attention_rows(f"{model}{i}", T=8, cls=model == "encoder")
    # a diverged lower-seed run whose trace is NaN must be skipped, not drawn
    run_rows.append(
        dict(
            run_id="bad",
            model=model,
            setting="benign",
            seed=1,
            status="diverged",
            regime=None,
            train_loss=np.nan,
            test_loss=np.nan,
        )
    )
    att += attention_rows("bad", T=8, cls=model == "encoder", value=np.nan)
    runs = frames.runs(run_rows)
    attention = frames.conform(att, syn_schema.ATTENTION)
    dynamics.softmax_dynamics(runs, attention, tmp_path / "dyn", model=model)
    assert_rendered(tmp_path / "dyn")
    # three rows of sample kinds by three settings; each panel draws its sample's softmax over
    # every token against the step, from the ok run (the diverged NaN run is not drawn)
    panels = drawn["dyn"]
    assert len(panels) == 9
    for j, (setting, _) in enumerate(settings.items()):
        run_id = f"{model}{settings_index[setting]}"
        trace = attention[attention["run_id"] == run_id]
        picked = dynamics.pick_samples(trace)
        for i, (kind, _, _) in enumerate(dynamics.SAMPLE_KINDS):
            panel = panels[3 * i + j]
            if picked[kind] is None:
                assert panel["lines"] == [] and f"no {kind} sample" in panel["texts"]
                continue
            probs = trace[trace["sample"] == picked[kind]].pivot(index="step", columns="token", values="probability")
            assert len(panel["lines"]) == probs.shape[1]
            for (x, y), token in zip(panel["lines"], probs.columns):
                assert list(x) == list(probs.index) and np.allclose(y, probs[token])
        assert "seed 42" in panels[j]["title"]


def test_loss_heatmap(tmp_path, drawn):
    """Four panels, each coloured by its metric's mean over seeds per (d, ||mu||) cell, with the
    theory's two curves at the pinned constants."""
    runs = heatmap_runs().assign(model="encoder")
    heatmaps.loss_heatmap(runs, tmp_path / "heat", c1=3.0, c2=1.0, setting="heatmap", model="encoder")
    assert_rendered(tmp_path / "heat")
    panels = drawn["heat"]
    assert [p["title"] for p in panels] == ["final train loss", "final test loss", "final train accuracy (noisy labels)",
                                            "final test accuracy"]  # fmt: skip
    n = int(runs["n"].iloc[0])
    for panel, metric in zip(panels, ("train_loss", "test_loss", "train_acc", "test_acc")):
        grid = metrics.cell_grid(runs, "d", "signal_norm", metric)
        assert np.ma.allequal(panel["meshes"][0], grid.values)
        (d1, y1), (d2, y2) = panel["lines"]
        assert np.allclose(y1, 3.0 * np.sqrt(d1 / n)) and np.allclose(y2, 1.0 * d2**0.25)


def boundary_fits_table(horizon=1000):
    base = dict(horizon=horizon, theory_b=np.nan)
    return pd.DataFrame(
        [
            dict(base, boundary="not overfitting", c=0.5, a=0.8, b=-0.4, c_theory=9.0, theory_a=0.5, theory_b=-0.5),
            dict(
                base,
                boundary="selection (harmful below)",
                c=2.0,
                a=np.nan,
                b=np.nan,
                c_theory=np.nan,
                theory_a=0.25,
                theory_b=0.0,
            ),  # fmt: skip
        ]
    )


def test_heatmap_curves_fitted_pinned_or_none():
    fits = boundary_fits_table()
    curves = heatmaps._heatmap_curves(fits, 1000, None, None)
    # the not-overfitting fit and its theory curve; the harmful fit has no exponent and no constant
    assert [(c["c"], c["a"], c["b"], c["ls"]) for c in curves] == [(0.5, 0.8, -0.4, "-"), (9.0, 0.5, -0.5, "--")]
    pinned = heatmaps._heatmap_curves(fits, 1000, 3.0, 1.5)
    assert [(c["c"], c["a"], c["b"], c["ls"]) for c in pinned] == [
        (0.5, 0.8, -0.4, "-"),
        (3.0, 0.5, -0.5, "--"),
        (1.5, 0.25, 0.0, "--"),
    ]
    assert heatmaps._heatmap_curves(fits, 50, None, None) == []  # no fit at this horizon
    assert heatmaps._heatmap_curves(None, 1000, None, None) == []


def test_loss_heatmap_with_fits(tmp_path):
    runs = heatmap_runs().assign(model="token", steps=1000)
    heatmaps.loss_heatmap(runs, tmp_path / "heat", fits=boundary_fits_table(), model="token")
    assert_rendered(tmp_path / "heat")


def test_loss_heatmap_needs_runs(tmp_path):
    with pytest.raises(ValueError):
        heatmaps.loss_heatmap(heatmap_runs(), tmp_path / "heat", c1=3.0, c2=1.0, setting="other")


NO_SELECTION = {name: np.nan for name, _ in syn_schema.SELECTION}


def delayed_tables(nan_in_ok_run=False):
    steps = [0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]
    run_rows, curve_rows = [], []
    for seed in (1, 2, 3):
        run_rows.append(dict(run_id=f"s{seed}", setting="delayed", seed=seed))
        for k in steps:
            fit = min(1.0, k / 50)
            curve_rows.append(
                dict(
                    run_id=f"s{seed}",
                    step=k,
                    train_loss=1 - fit / 2,
                    test_loss=0.7,
                    train_acc=0.8 + 0.2 * fit,
                    test_acc=min(1.0, 0.5 + k / 400 + seed / 100),
                    train_acc_clean=1.0,
                    train_acc_noisy=fit,
                    **{
                        **NO_SELECTION,
                        "test_sel_relevant": min(1.0, k / 100),
                        "test_loss_normalised": max(0.1, 1 - k / 200),
                    },
                )
            )
    run_rows.append(dict(run_id="bad", setting="delayed", seed=4, status="diverged", regime=None))
    curve_rows += [
        dict(
            run_id="bad",
            step=k,
            train_loss=np.nan,
            test_loss=np.nan,
            train_acc=np.nan,
            test_acc=np.nan,
            train_acc_clean=np.nan,
            train_acc_noisy=np.nan,
            **NO_SELECTION,
        )
        for k in steps
    ]
    if nan_in_ok_run:
        curve_rows[3]["test_acc"] = np.nan
    return frames.runs(run_rows), frames.conform(curve_rows, syn_schema.CURVES)


def test_delayed_generalization(tmp_path, drawn):
    """Each curve is the mean over the ok runs' logged steps past 0 (the diverged run left out)."""
    runs, curves = delayed_tables()
    dynamics.delayed_generalization(runs, curves, tmp_path / "delayed", loss_threshold=0.5)
    assert_rendered(tmp_path / "delayed")
    top, bottom = drawn["delayed"]
    ok = (
        curves[curves["run_id"].isin(["s1", "s2", "s3"]) & (curves["step"] > 0)].groupby("step").mean(numeric_only=True)
    )
    for panel, columns in ((top, dynamics.DELAYED_LINES), (bottom, dynamics.DELAYED_LOSSES)):
        for (x, y), column in zip(panel["lines"], columns):
            assert list(x) == list(ok.index) and np.allclose(y, ok[column]), column


def test_delayed_generalization_refuses_nan_in_ok_run(tmp_path):
    runs, curves = delayed_tables(nan_in_ok_run=True)
    with pytest.raises(ValueError, match="non-finite"):
        dynamics.delayed_generalization(runs, curves, tmp_path / "delayed", loss_threshold=0.5)


DATASETS = [
    dict(dataset="mnist", dataset_label="MNIST", paper_dataset="MNIST"),
    dict(
        dataset="sst2",
        dataset_label="SST-2 (stands in for AG-news)",
        paper_dataset=None,
        backbone="bert-base-uncased",
        num_classes=2,
    ),
]


def test_real_eta_heatmap(tmp_path):
    rows = [
        dict(**ds, eta=round(eta, 2), train_loss=eta, test_loss=0.3 + eta)
        for ds in DATASETS
        for eta in np.arange(0, 0.21, 0.01)
    ]
    rows[5].update(status="failed", train_loss=np.nan, test_loss=np.nan)
    real = frames.real_runs(rows)
    real_figures.real_eta_heatmap(real, tmp_path / "eta")
    assert_rendered(tmp_path / "eta")
    grid = metrics.cell_grid(
        real.assign(eta=real["eta"].round(4)), "eta", "dataset", "train_loss", y_values=["mnist", "sst2"]
    )
    assert grid.diverged.sum() == 1 and grid.values.count() == 41


def test_real_eta_heatmap_rows_name_the_data_sets_and_tiny_losses_keep_their_digits(tmp_path, monkeypatch):
    """Rows say only the data set's name (the note says its data and backbone); a train loss of
    order 1e-5 prints its digits, not 0.00."""
    drawn = {}
    save = style.save

    def keep(fig, stem, note):
        drawn.update(
            rows=[[t.get_text() for t in ax.get_yticklabels()] for ax in fig.axes[:2]],
            cells=[t.get_text() for t in fig.axes[0].texts],
            note=note,
        )
        save(fig, stem, note)

    monkeypatch.setattr(real_figures.style, "save", keep)
    rows = [
        dict(**ds, eta=eta, train_loss=1.234e-5 + eta, test_loss=0.3 + eta) for ds in DATASETS for eta in (0.0, 0.2)
    ]
    real_figures.real_eta_heatmap(frames.real_runs(rows), tmp_path / "eta")
    assert_rendered(tmp_path / "eta")
    assert drawn["rows"] == [["mnist", "sst2"]] * 2
    assert drawn["cells"] == ["1.23e-5", "0.2", "1.23e-5", "0.2"]
    assert "sst2: SST-2 (stands in for AG-news), backbone bert-base-uncased" in drawn["note"]
    assert [real_figures._cell_text(v) for v in (0.693147, 2.0, 0.000123, 0.0)] == ["0.693", "2", "0.000123", "0"]


def test_real_attention_dynamics(tmp_path, drawn):
    run_rows, att_rows = [], []
    for ds in DATASETS:
        for n in (20, 200):
            for eta in (0.0, 0.2):
                for seed in (42, 314):
                    run_id = f"{ds['dataset']}-{n}-{eta}-{seed}"
                    run_rows.append(dict(**ds, run_id=run_id, n=n, eta=eta, seed=seed))
                    att_rows += [
                        dict(
                            run_id=run_id,
                            dataset=ds["dataset"],
                            n=n,
                            eta=eta,
                            seed=seed,
                            epoch=e,
                            train_loss=1 / e,
                            max_attention=0.2 + 0.5 * (1 - 1 / e),
                        )
                        for e in range(1, 30)
                    ]
    run_rows[0]["status"] = "failed"
    for row in att_rows[:29]:
        row["max_attention"] = np.nan
    real_figures.real_attention_dynamics(
        frames.conform(att_rows, real_schema.REAL_ATTENTION), frames.real_runs(run_rows), tmp_path / "att"
    )
    assert_rendered(tmp_path / "att")
    # one panel per data set, one line per (n, eta): the mean over the ok seeds, so the failed
    # run's NaN trace is left out and its (n, eta) line is its other seed's
    panels = [p for p in drawn["att"] if p["lines"]]
    assert len(panels) == len(DATASETS)
    epochs = np.arange(1, 30)
    for panel in panels:
        assert len(panel["lines"]) == 4
        for x, y in panel["lines"]:
            assert list(x) == list(epochs) and np.allclose(y, 0.2 + 0.5 * (1 - 1 / epochs))


def test_a_constant_panel_states_its_value_instead_of_a_colour_bar():
    import matplotlib.pyplot as plt

    runs = heatmap_runs()  # train_acc is 1.0 in every cell, train_loss varies
    fig, (ax_const, ax_var) = plt.subplots(1, 2)
    edges = style.edges(np.array([250, 375, 500, 625])), style.edges(np.array([5.0, 7.5, 10.0]))
    style.grid_panel(ax_const, *edges, metrics.cell_grid(runs, "d", "signal_norm", "train_acc"), "train accuracy")
    style.grid_panel(ax_var, *edges, metrics.cell_grid(runs, "d", "signal_norm", "train_loss"), "train loss")
    assert len(fig.axes) == 3  # one colour bar: the varying panel's
    assert [t.get_text() for t in ax_const.texts] == ["train accuracy: 1\nin every cell"]
    assert not ax_var.texts
    plt.close(fig)


def test_atlas_figures_and_tables_from_trained_sweeps(tmp_path, monkeypatch, drawn):
    import pandas as pd

    from benign.analysis.boundaries import BOUNDARIES
    from benign.analysis.milestones import annotate
    from benign.analysis.theory import Criteria, atlas_view
    from benign.figures import atlas as atlas_figures
    from benign.figures import one_step as one_step_figures
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
    planned = [run for _, runs, _ in sweep_groups("token", sweeps, base, ["atlas"]) for run in runs]
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


def test_real_test_dynamics_renders(tmp_path):
    runs, curves = frames.real_dynamics_case()
    real_figures.real_test_dynamics(
        curves, runs, tmp_path / "dyn", grid={"n": [200], "eta": [0.0, 0.2], "seeds": [1, 2]}
    )
    assert_rendered(tmp_path / "dyn")
    with pytest.raises(ValueError, match="no real-data test curves"):
        real_figures.real_test_dynamics(curves, runs, tmp_path / "none", grid={"n": [20], "eta": [0.0], "seeds": [1]})
