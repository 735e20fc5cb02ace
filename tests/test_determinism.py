"""Two clean runs of the smoke config give identical metrics tables: equal, not close.

Only the measured columns (``schema.MEASURED``: wall time, peak memory) may differ. The first
run is the session's smoke run (shared with the workflow tests); the second builds the tables
of every model but the token model, and the real-data tables, from nothing (data sets fetched
again, features computed again), in a copy of the first's tree, so both run the same code even
while the working tree is being edited. The token model's tables are compared the same way, by
two clean builds, in tests/test_crash_resume.py (a run killed and resumed against an
uninterrupted one).
"""

from __future__ import annotations

import pandas as pd
import pytest

from benign.core.schema import MEASURED
from tests.helpers.smoke_run import local_smoke_run
from tests.helpers.workflow_utils import REAL_TABLES, TABLES, build_tables, copy_repo, files_under, read_tables

ALL = [t for t in TABLES if not t.startswith("synthetic/token/")] + REAL_TABLES


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
    """The same files in every job folder the second run built, and the same real-data files."""
    first, second = runs
    built = sorted((second / "results/synthetic/jobs").iterdir())
    assert built, "the second run built no synthetic job"
    for job in built:
        assert files_under(job) == files_under(first / job.relative_to(second)), job.name
    assert files_under(second / "results/real") == files_under(first / "results/real")
