"""The real-data figures (benign.figures.real, Figures 8 and 9): what each panel draws is the runs' numbers."""

import numpy as np
import pytest

from benign.analysis import metrics
from benign.figures import real as real_figures
from benign.figures import style
from benign.real import schema as real_schema
from tests.helpers import frames
from tests.helpers.figures import assert_rendered

DATASETS = frames.REAL_DATASETS


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


def test_real_test_dynamics_renders(tmp_path):
    runs, curves = frames.real_dynamics_case()
    real_figures.real_test_dynamics(
        curves, runs, tmp_path / "dyn", grid={"n": [200], "eta": [0.0, 0.2], "seeds": [1, 2]}
    )
    assert_rendered(tmp_path / "dyn")
    with pytest.raises(ValueError, match="no real-data test curves"):
        real_figures.real_test_dynamics(curves, runs, tmp_path / "none", grid={"n": [20], "eta": [0.0], "seeds": [1]})
