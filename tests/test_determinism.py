"""Two clean runs of the smoke config give identical metrics tables: equal, not close.

Only the measured columns (``schema.MEASURED``: wall time, peak memory) may differ. The first
run is the session's smoke run (shared with the workflow tests); the second builds every
table, from nothing (data sets fetched again, features computed again), in a copy of the
first's tree, so both run the same code even while the working tree is being edited.
"""

from __future__ import annotations

import pandas as pd
import pytest

from benign.core.schema import MEASURED
from tests.helpers.smoke_run import local_smoke_run
from tests.helpers.workflow_utils import REAL_TABLES, TABLES, build_tables, copy_repo, files_under, read_tables

ALL = TABLES + REAL_TABLES


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    first = local_smoke_run(tmp_path_factory)[0]
    second = copy_repo(tmp_path_factory.mktemp("second") / "repo", source=first)
    build_tables(second, "config/smoke.yaml", tables=ALL)
    return first, second


@pytest.mark.slow
def test_metrics_tables_are_identical(runs):
    first, second = (read_tables(repo, drop=MEASURED, tables=ALL) for repo in runs)
    for name, table in first.items():
        assert len(table) > 0, name
        pd.testing.assert_frame_equal(second[name], table, check_exact=True, obj=name)


@pytest.mark.slow
def test_same_job_tables(runs):
    for half in ("synthetic", "real"):
        first, second = (files_under(repo / "results" / half) for repo in runs)
        assert first == second, half
