"""The smoke config's Parquet tables equal a stored copy (tests/fixtures/smoke_tables/), made
before the library was reorganised into its registry, models, speed and config modules: the
reorganisation changed no number. Columns and runs added since (the milestones, new sweeps) are not compared. A stored file's name is its path under results/, with "__"
for "/". Wall times, devices and code fingerprints are left out; floats
are compared to float32 rounding, so that another CPU's BLAS kernels do not fail the check."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from smoke_run import local_smoke_run

from benign.schema import MEASURED

STORED = Path(__file__).parent / "fixtures" / "smoke_tables"
VOLATILE = [*MEASURED, "device", "code_version"]


@pytest.mark.slow
@pytest.mark.parametrize("stored", sorted(STORED.glob("*.parquet")), ids=lambda p: p.stem)
def test_smoke_tables_equal_the_stored_copy(tmp_path_factory, stored):
    repo, _ = local_smoke_run(tmp_path_factory)
    new = pd.read_parquet(repo / "results" / (stored.stem.replace("__", "/") + ".parquet"))
    old = pd.read_parquet(stored)
    assert set(old.columns) <= set(new.columns)  # columns added since are not compared
    new = new[list(old.columns)]
    if "run_id" in old:  # runs added since (new sweeps) are not compared; every stored one is
        assert set(old["run_id"]) <= set(new["run_id"])
        new = new[new["run_id"].isin(old["run_id"])]
        key = ["run_id", *(c for c in ("step", "epoch", "sample", "token") if c in old)]
        new, old = (df.sort_values(key, kind="stable").reset_index(drop=True) for df in (new, old))
    new, old = (df.drop(columns=[c for c in VOLATILE if c in df]) for df in (new, old))
    assert len(new) == len(old)
    pd.testing.assert_frame_equal(new, old, check_exact=False, rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_fitted_boundary_agrees_with_the_cells(tmp_path_factory):
    """The regime-boundaries table of a generated run: at every horizon, at least 90% of the
    atlas cells above the fitted not-overfitting boundary have most seeds not overfitting."""
    repo, _ = local_smoke_run(tmp_path_factory)
    fits = pd.read_csv(repo / "results" / "tables" / "regime_boundaries.csv")
    rows = fits[(fits["boundary"] == "not overfitting") & (fits["cells_on_side"] > 0)]
    assert len(rows) >= 2, "the smoke atlas fits the not-overfitting boundary at two horizons"
    for _, row in rows.iterrows():
        assert row["agreement"] >= 0.9, f"horizon {row['horizon']}: {row['agreement']:.0%} of {row['cells_on_side']}"
