"""The path templates (benign/core/paths.py): filled by hand-worked cases, and the only place the
workflow's rules and scripts take a results or resources path from."""

import re

import pytest

from benign.core import paths


def test_fill_sets_the_named_wildcards_and_keeps_the_others():
    assert paths.fill(paths.SYNTHETIC_JOB, table="runs") == "results/synthetic/jobs/{job}/runs.parquet"
    assert paths.fill(paths.FEATURES, dataset="mnist", part=3, parts=16) == (
        "resources/features/mnist/part3-of-16.safetensors"
    )
    assert (
        paths.fill(paths.ARTIFACT, kind="table", stem="regime_model", ext=".csv") == "results/tables/regime_model.csv"
    )


def test_tables_names_a_jobs_outputs():
    assert paths.tables(paths.REAL_JOB, cell="rotten_s1_n8") == {
        "runs": "results/real/jobs/rotten_s1_n8/runs.parquet",
        "curves": "results/real/jobs/rotten_s1_n8/curves.parquet",
        "attention": "results/real/jobs/rotten_s1_n8/attention.parquet",
    }


# a string that starts with results/ or resources/ (a triple-quoted docstring's first line aside)
LITERAL = re.compile(r"""(?<!["'])["'](results|resources)/""")


@pytest.mark.parametrize("pattern", ["workflow/rules/*.smk", "workflow/scripts/*.py", "Snakefile"])
def test_rules_and_scripts_write_no_path_of_their_own(root, pattern):
    found = [f"{path.name}:{k}: {line.strip()}" for path in sorted(root.glob(pattern))
             for k, line in enumerate(path.read_text().splitlines(), 1) if LITERAL.search(line)]  # fmt: skip
    assert not found, found
