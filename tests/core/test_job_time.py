"""What the training jobs took, per part (benign.core.job_time): a job's part from its path, named
as the forecast names it, and the part's time the sum of its runs' shares, worked by hand."""

import pandas as pd

from benign.core import job_time, paths


def test_a_jobs_part_is_named_from_its_path():
    assert job_time.group("token_atlas_03") == "train token_atlas"
    assert job_time.job_part(paths.fill(paths.SYNTHETIC_JOB, job="encoder_heatmap_12", table="runs")) == (
        job_time.SYNTHETIC, "train encoder_heatmap")  # fmt: skip
    refine = paths.fill(paths.REFINEMENT_JOB, rjob="token_atlas_refine_04", table="runs")
    check = paths.fill(paths.REFINEMENT_JOB, rjob="token_atlas_convergence_01", table="runs")
    assert job_time.job_part(refine) == (job_time.SYNTHETIC, "refinement")
    assert job_time.job_part(check) == (job_time.SYNTHETIC, "step check")
    assert job_time.job_part(paths.fill(paths.REAL_JOB, cell="mnist_s42_n200", table="runs")) == (
        job_time.REAL, "real phase 2")  # fmt: skip


def test_a_parts_time_is_the_sum_of_its_runs_shares_the_synthetic_half_first(tmp_path):
    jobs = {paths.fill(paths.REAL_JOB, cell="mnist_s42_n20", table="runs"): [30.0],
            paths.fill(paths.SYNTHETIC_JOB, job="token_atlas_00", table="runs"): [1.0, 2.0],
            paths.fill(paths.SYNTHETIC_JOB, job="token_atlas_01", table="runs"): [4.0],
            paths.fill(paths.REFINEMENT_JOB, rjob="token_atlas_refine_00", table="runs"): [0.5]}  # fmt: skip
    files = []
    for path, shares in jobs.items():
        (tmp_path / path).parent.mkdir(parents=True)
        pd.DataFrame({"wall_time_s": shares}).to_parquet(tmp_path / path)
        files.append(tmp_path / path)
    got = job_time.measured(files)
    assert got == {"refinement": (job_time.SYNTHETIC, 0.5), "train token_atlas": (job_time.SYNTHETIC, 7.0),
                   "real phase 2": (job_time.REAL, 30.0)}  # fmt: skip
    assert list(got) == ["refinement", "train token_atlas", "real phase 2"]
