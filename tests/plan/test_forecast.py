"""The forecast a run prints before it starts (benign/plan/forecast.py): every planned job
counted once, at the cost model's estimate; the jobs already done left out; the refinement
estimated until it is planned, then priced as planned; what the command line and the summary
print of it."""

from pathlib import Path

import pytest
import yaml
from snakemake.utils import update_config

from benign import cli
from benign.core import job_time
from benign.plan import forecast as fc
from benign.plan import resources
from benign.workplan import WorkPlan

REPO = Path(__file__).resolve().parents[2]


def work(*extra: str) -> WorkPlan:
    cfg = yaml.safe_load((REPO / "config/config.yaml").read_text())
    for name in extra:
        update_config(cfg, yaml.safe_load((REPO / name).read_text()))
    return WorkPlan.load(cfg, REPO / "workflow/schemas/config.schema.yaml")


@pytest.fixture(scope="module")
def default():
    return work()


def test_every_planned_job_counts_once_at_its_estimate(default):
    plan = default.plan
    got = fc.forecast(plan, default.fits, limit=default.limit_need())
    trained = sum(s for part, (_, s) in got.parts.items() if part.startswith("train "))
    assert trained == pytest.approx(sum(resources.synthetic_job_need(r).seconds for r in plan.synthetic_jobs.values()))
    real = sum(need.seconds for need in plan.real_needs["train"].values())
    assert got.parts["real phase 2"] == (fc.REAL, pytest.approx(real))
    features = sum(plan.feature_parts[name] * need.seconds for name, need in plan.real_needs["features"].items())
    assert got.parts["backbone features"][1] == pytest.approx(features)
    assert got.parts["limit"][1] == pytest.approx(default.limit_need().seconds) and got.parts["limit"][1] > 0
    assert got.estimated == ("refinement", "step check")  # the atlas is refined and checked, not yet planned
    assert got.total() == pytest.approx(sum(s for _, s in got.parts.values()))
    training = sum(seconds for half, seconds in got.training_parts().values() if half == fc.SYNTHETIC)
    assert (
        training == got.half(fc.SYNTHETIC, training_only=True) < got.half(fc.SYNTHETIC)
    )  # the limit and the SVM check record no runs


def test_a_job_whose_outputs_exist_is_left_out(default):
    plan = default.plan
    job, runs = next(iter(plan.synthetic_jobs.items()))
    every = fc.forecast(plan, default.fits)
    left = fc.forecast(plan, default.fits, pending=lambda kind, key: not (kind == "synthetic" and key == job))
    assert every.total() - left.total() == pytest.approx(resources.synthetic_job_need(runs).seconds)
    nothing = fc.forecast(plan, default.fits, pending=lambda kind, key: False)
    assert nothing.total() == 0 and "no training job left" in nothing.text(2)


def test_the_run_forecasts_the_jobs_snakemake_scheduled(default):
    """At its start a run forecasts the jobs Snakemake scheduled, found by their output files
    (so a job rerun for an edit counts, a finished one does not)."""
    job, runs = next(iter(default.plan.synthetic_jobs.items()))
    got = default.forecast(outputs=[f"results/synthetic/jobs/{job}/runs.parquet", "results/summary.md"])
    assert got.parts == {job_time.group(job): (fc.SYNTHETIC, pytest.approx(resources.synthetic_job_need(runs).seconds))}
    assert "real half" not in got.text(1) and "on 1 core " in got.text(1)
    # the refinement to be planned: the fitted model's other jobs are not in the DAG before its checkpoint has run
    planned = default.forecast(outputs=["./results/synthetic/refine/plan.json"])
    assert {"refinement", "step check", "limit"} <= set(planned.parts) and planned.estimated == (
        "refinement",
        "step check",
    )
    fitted = {job_time.group(job) for job in default.jobs_of(default.fits["model"])}
    assert fitted <= set(planned.parts) and "train encoder_heatmap" not in planned.parts


def test_the_refinement_once_planned_is_priced_as_planned(default):
    """A planned refinement replaces the estimate: its jobs at their own estimates, the step
    check's apart (the refinement's plan names them ..._convergence_NN)."""
    line = next(r for runs in default.plan.synthetic_jobs.values() for r in runs if "atlas" in r["sweeps"])
    planned = {"token_atlas_refine_00": [dict(line, seed=3)] * 4, "token_atlas_convergence_00": [dict(line, seed=1)]}
    got = fc.forecast(default.plan, default.fits, refinement=planned)
    assert got.estimated == ()
    assert got.parts["refinement"][1] == pytest.approx(
        resources.synthetic_job_need(planned["token_atlas_refine_00"]).seconds
    )
    assert got.parts["step check"][1] == pytest.approx(resources.batch_need([dict(line, seed=1)])[1])


def test_the_estimate_grows_with_the_refinements_seeds(default):
    """The estimate prices each refined seed of each coarse line: twice the seeds, about twice the cost."""
    fits = dict(default.fits)
    base = fc._refinement_estimate(default.plan, fits)[0]
    fits["refine"] = dict(fits["refine"], seeds=list(fits["refine"]["seeds"]) * 2)
    assert fc._refinement_estimate(default.plan, fits)[0] == pytest.approx(2 * base)


def test_the_text_names_each_half_its_largest_parts_and_the_wall_time_on_the_cores(default):
    text = fc.forecast(default.plan, default.fits, limit=default.limit_need()).text(2)
    head = text.splitlines()[0]
    total = float(head.split(": ")[1].split(" core-minutes")[0])
    assert f"about {total / 2:.0f} min on 2 cores" in head
    assert "  synthetic half:" in text and "  real half:" in text
    assert "refinement:" in text and "(estimated: planned when the coarse atlas is done)" in text
    assert "min on" not in fc.forecast(default.plan, default.fits).text(None).splitlines()[0]


def test_the_command_line_prints_the_forecast_of_a_config(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(REPO)
    assert cli.main(["forecast", "--all", "--cores", "2", "--configfile", "config/smoke.yaml"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Forecast (benign/plan/forecast.py): ") and "on 2 cores" in out
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"synthetic": {"defaults": {"n": -3}}}))
    assert cli.main(["forecast", "--configfile", str(bad)]) == 2
    assert "synthetic.defaults.n" in capsys.readouterr().err


def test_the_summary_prints_the_forecast_beside_the_job_time(tmp_path):
    from benign.tables.summary import summary

    path = tmp_path / "summary.md"
    jobs = {"train token_atlas": (fc.SYNTHETIC, 600.0), "refinement": (fc.SYNTHETIC, 1200.0),
            "real phase 2": (fc.REAL, 600.0)}  # fmt: skip
    summary({}, path, {"commit": "x"}, jobs, {"refinement": (fc.SYNTHETIC, 1200.0)})
    text = path.read_text()
    assert "- job time, synthetic half: 30.0 min (forecast: 20.0 min, 1.50x)\n" in text
    assert "  - refinement: 20.0 min (forecast: 20.0 min, 1.00x)\n  - train token_atlas: 10.0 min\n" in text
    assert "- job time, real half: 10.0 min\n  - real phase 2: 10.0 min\n" in text


def test_the_benchmark_reads_a_runs_parts_by_the_forecasts_names(tmp_path):
    """benchmarks/forecast.py measures each part from the jobs' runs tables, named as the forecast names them."""
    import pandas as pd

    from benchmarks.forecast import measured

    for job, seconds in (("token_atlas_00", 3.0), ("token_atlas_01", 4.0)):
        folder = tmp_path / "results/synthetic/jobs" / job
        folder.mkdir(parents=True)
        pd.DataFrame({"wall_time_s": [seconds / 2, seconds / 2]}).to_parquet(folder / "runs.parquet")
    folder = tmp_path / "results/synthetic/refine/token_atlas_convergence_00"
    folder.mkdir(parents=True)
    pd.DataFrame({"wall_time_s": [5.0]}).to_parquet(folder / "runs.parquet")
    folder = tmp_path / "results/real/jobs/mnist_s42_n20"
    folder.mkdir(parents=True)
    pd.DataFrame({"wall_time_s": [2.0]}).to_parquet(folder / "runs.parquet")
    assert measured(tmp_path) == {"train token_atlas": 7.0, "step check": 5.0, "real phase 2": 2.0}
    assert all(isinstance(v, float) for v in measured(tmp_path).values())  # plain numbers, for the JSON
