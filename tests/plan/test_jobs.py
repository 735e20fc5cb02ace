"""Config expansion into jobs (benign.plan.jobs), and the checks a JSON schema cannot express
(benign.plan.validate). The planner reads validated configs, their schema defaults filled in."""

import copy
import re

import pytest
import yaml

from benign.plan import ConfigError
from benign.plan import jobs as plan
from benign.plan import validate as bc
from benign.plan.config_values import read, sweep_length


def valid(cfg: dict) -> dict:
    """``cfg`` as the workflow plans it: validated, with the schema's defaults."""
    bc.validate_config(cfg)
    return cfg


@pytest.fixture
def cfg(root):
    return valid(yaml.safe_load((root / "config/config.yaml").read_text()))


def test_paper_grid_is_39_by_39(cfg):
    jobs = plan.synthetic_jobs(read(cfg))
    heat = [r for job, runs in jobs.items() if job.startswith("token_heatmap") for r in runs]
    assert len(heat) == 39 * 39 * len(cfg["synthetic"]["token"]["sweeps"]["heatmap"]["seeds"])
    assert {r["d"] for r in heat} == set(range(250, 5001, 125))
    assert min(r["signal_norm"] for r in heat) == 5 and max(r["signal_norm"] for r in heat) == 100


def test_warning_for_eta_that_flips_nothing(cfg):
    cfg = copy.deepcopy(cfg)
    cfg["synthetic"]["defaults"]["eta"] = 0.01
    assert any("flips no label" in w for w in bc.warnings(read(cfg)))


def _merged(base: dict, over: dict) -> dict:
    """A config file given with --configfile, merged into config/config.yaml as Snakemake merges."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def test_smoke_config_replaces_every_default_sweep(cfg, root):
    """A default sweep the smoke config does not replace would train at full size in the tests."""
    smoke = valid(_merged(cfg, yaml.safe_load((root / "config/smoke.yaml").read_text())))
    runs = [r for job in plan.synthetic_jobs(read(smoke)).values() for r in job]
    assert max(r["steps"] for r in runs) <= 1000 and max(r["d"] for r in runs) <= 200, (
        "a full-size run in the smoke config"
    )


def _atlas_cfg(cfg, sweeps: dict) -> dict:
    out = copy.deepcopy(cfg)
    out["synthetic"]["token"]["sweeps"] = sweeps
    out["synthetic"]["boundary_fits"] = {"model": "token", "sweeps": ["line_d", "line_n"], "horizons": [10, 40]}
    for name in [m for m in out["synthetic"] if m in ("encoder", "token_p_w0", "token_p_identity")]:
        del out["synthetic"][name]
    return valid(out)


def test_a_run_shared_by_two_sweeps_is_planned_once():
    """A line along d and a line along n meet at one (d, n): its runs are trained once, in one job,
    with a setting naming both sweeps; a shorter run that a longer one contains is not trained."""
    base = yaml.safe_load((__import__("pathlib").Path(__file__).parents[2] / "config/config.yaml").read_text())
    sweeps = {
        "line_d": {"axes": {"d": [40, 80], "signal_norm": [2, 4]}, "fixed": {"n": 10}, "seeds": [1, 2], "steps": 20,
                   "log_points": 5},
        "line_n": {"axes": {"n": [6, 10], "signal_norm": [2, 4]}, "fixed": {"d": 80}, "seeds": [1, 2], "steps": 40,
                   "log_points": 5},
    }  # fmt: skip
    runs = [
        r for job in plan.synthetic_jobs(read(_atlas_cfg(base, sweeps))).values() for r in job if "line" in r["setting"]
    ]
    keys = [(r["d"], r["n"], r["signal_norm"], r["seed"]) for r in runs]
    assert len(keys) == len(set(keys)) == 2 * 2 * 2 + 2 * 2 * 2 - 2 * 2  # (d 80, n 10) is in both lines
    shared = [r for r in runs if (r["d"], r["n"]) == (80, 10)]
    assert {(r["setting"], tuple(r["sweeps"])) for r in shared} == {("line_n", ("line_n", "line_d"))} and {
        r["steps"] for r in shared
    } == {40}


def test_a_run_shared_by_two_sweeps_is_trained_once_and_counted_once():
    from benign.analysis.theory import Criteria, atlas_labels
    from benign.plan.schema import default
    from benign.synthetic.trainer import RunSpec, train_runs

    base = yaml.safe_load((__import__("pathlib").Path(__file__).parents[2] / "config/config.yaml").read_text())
    base["synthetic"]["defaults"].update(T=4, n_test=20)
    sweeps = {
        "line_d": {"axes": {"d": [40, 80], "signal_norm": [2, 8]}, "fixed": {"n": 10}, "seeds": [1], "steps": 20,
                   "log_points": 5},
        "line_n": {"axes": {"n": [6, 10], "signal_norm": [2, 8]}, "fixed": {"d": 80}, "seeds": [1], "steps": 40,
                   "log_points": 5},
    }  # fmt: skip
    jobs = plan.synthetic_jobs(read(_atlas_cfg(base, sweeps)))
    specs = [RunSpec(**r) for job, rs in jobs.items() if job.startswith("token_line") for r in rs]
    runs, curves, _ = train_runs(specs, device="cpu")
    assert runs["run_id"].is_unique and len(runs) == 6
    atlas, labels = atlas_labels(runs, curves, ["line_d", "line_n"], [10], Criteria(**default("synthetic.regime")))
    assert len(atlas) == 6 and labels["run_id"].is_unique and len(labels) == 6


def test_the_config_layer_does_not_import_torch():
    """The Snakefile reads the config through benign.plan.load at every parse (each dry run, each
    job): it must not pay torch's import."""
    import subprocess
    import sys

    code = "import sys, benign.plan.load, benign.artifacts.table; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_default_atlas_spans_four_decades_with_exact_noise_on_every_line(cfg):
    """The atlas's lines: d from 10^3 to 10^7, n from 10 to 80 (0.9 of a decade), every line with
    d >= 5 n^2 (the exclusions), n eta
    an even number of flips (the realised rate is 0.2 on every line), the Gram engine throughout,
    the step size 5 on every run (lr = 5 / d: the step does not grow with d), and on each line the
    norms whose SNR lies in the sweep's range."""
    from benign.synthetic.spec import RunSpec, n_flips, snr

    runs = [
        r for job, rs in plan.synthetic_jobs(read(cfg)).items() if re.fullmatch(r"token_atlas_\d+", job) for r in rs
    ]
    lines = {(r["d"], r["n"]) for r in runs}
    assert min(d for d, _ in lines) == 1000 and max(d for d, _ in lines) == 10**7 and len(lines) == 16
    assert {n for _, n in lines} == {10, 20, 40, 80}
    assert all(d >= 5 * n * n for d, n in lines)
    assert all(n_flips(r["n"], r["eta"]) == 0.2 * r["n"] for r in runs)
    assert {r["engine"] for r in runs} == {"gram"}
    assert len({(r["d"], r["n"], r["seed"], r["signal_norm"]) for r in runs}) == len(runs)
    assert {r["step_size"] for r in runs} == {5}
    assert all(RunSpec(**r).lr == pytest.approx(5 / r["d"]) and r["lr"] == pytest.approx(5 / r["d"]) for r in runs)
    low, high = cfg["synthetic"]["token"]["sweeps"]["atlas"]["snr_range"]
    assert all(low <= snr(r["signal_norm"], r["sigma"], r["d"]) <= high for r in runs)
    assert {sum(1 for r in runs if (r["d"], r["n"], r["seed"]) == (d, n, 1)) for d, n in lines} == {11}


def test_a_sweep_may_fix_the_flow_and_its_jobs_cost_its_steps():
    """integrator and flow_tol are fixed values of a sweep: its runs train by the flow, at the
    default tolerance where none is given, and their jobs are sized by the flow's steps."""
    from benign.plan import resources
    from benign.synthetic import flow
    from benign.synthetic.spec import RunSpec

    base = yaml.safe_load((__import__("pathlib").Path(__file__).parents[2] / "config/config.yaml").read_text())
    fixed = {"n": 10, "d": 10**5, "engine": "gram", "step_size": 5}
    sweeps = {
        "line_d": {"axes": {"signal_norm": [8, 16]}, "fixed": {**fixed, "integrator": "flow"}, "seeds": [1],
                   "steps": 2 * 10**7, "log_points": 41},
        "line_n": {"axes": {"signal_norm": [8, 16]}, "fixed": {**fixed, "integrator": "flow", "flow_tol": 0.1},
                   "seeds": [2], "steps": 2 * 10**7, "log_points": 41},
    }  # fmt: skip
    runs = [
        r for rs in plan.synthetic_jobs(read(_atlas_cfg(base, sweeps))).values() for r in rs if "line" in r["setting"]
    ]
    assert {(r["setting"], r["integrator"], r["flow_tol"]) for r in runs} == {
        ("line_d", "flow", flow.TOL), ("line_n", "flow", 0.1)
    }  # fmt: skip
    assert all(RunSpec(**r).flow_tol == r["flow_tol"] for r in runs)
    gd = [dict(r, integrator="gd", flow_tol=None) for r in runs[:2]]
    assert resources.batch_need(runs[:2], "cpu")[1] < resources.batch_need(gd, "cpu")[1] / 1000


def test_the_predictors_check_lies_off_the_atlass_grid_at_its_noise_rate(cfg):
    """The check's cells (docs/regimes.md#the-predictors-check): no (d, n) of the atlas, seeds no
    fit uses, the atlas's step size, integrator and horizon, and n eta an even number of flips,
    so the realised noise rate is the atlas's 0.2 (n = 14 would flip 2 labels: 0.14)."""
    from benign.synthetic.spec import n_flips

    jobs = plan.synthetic_jobs(read(cfg))
    atlas = [r for job, rs in jobs.items() if re.fullmatch(r"token_atlas_\d+", job) for r in rs]
    check = [r for job, rs in jobs.items() if job.startswith("token_atlas_check") for r in rs]
    assert check and not {(r["d"], r["n"]) for r in check} & {(r["d"], r["n"]) for r in atlas}
    assert not {r["seed"] for r in check} & set(cfg["synthetic"]["boundary_fits"]["refine"]["seeds"])
    assert all(n_flips(r["n"], r["eta"]) == 0.2 * r["n"] for r in check)
    assert {(r["step_size"], r["integrator"], r["steps"]) for r in check} == {(5, "flow", atlas[0]["steps"])}


def test_a_sweep_trains_the_defaults_steps_and_logs_its_ends_unless_it_says():
    assert sweep_length({}, 500) == {"steps": 500, "log_every": 0, "log_points": 0}
    assert sweep_length({"steps": 80, "log_points": 9}, 500) == {"steps": 80, "log_every": 0, "log_points": 9}


def test_a_config_file_switches_a_sweep_off(root):
    """A config file cannot delete a key of config.yaml; ``skip: true`` leaves a sweep out, as if
    it were not there: no jobs, no artifact that reads it, and no ``skip`` key left behind. Read
    from YAML text, as Snakemake reads a config file."""
    from snakemake.utils import update_config

    from benign.artifacts.synthetic import has_delay_scan
    from benign.workplan import WorkPlan

    cfg = yaml.safe_load((root / "config/config.yaml").read_text())
    text = "synthetic:\n  token:\n    sweeps:\n      heatmap: {skip: true}\n      delay_scan: {skip: true}\n"
    update_config(cfg, yaml.safe_load(text))
    work = WorkPlan.load(cfg, root / "workflow/schemas/config.schema.yaml")
    assert set(work.plan.config.models["token"].sweeps) == {"atlas", "atlas_check", "one_step"}
    assert not any(job.startswith(("token_heatmap", "token_delay_scan")) for job in work.plan.synthetic_jobs)
    assert not has_delay_scan(work.plan) and "loss_heatmap" not in {a.name for a, m in work.drawn() if m == "token"}
    assert all("skip" not in sweep for sweep in work.config["synthetic"]["token"]["sweeps"].values())
    off = copy.deepcopy(yaml.safe_load((root / "config/config.yaml").read_text()))
    update_config(off, {"synthetic": {"token": {"sweeps": {"atlas": {"skip": True}}}}})
    with pytest.raises(ConfigError, match="boundary_fits"):  # the fits name the sweep switched off
        WorkPlan.load(off, root / "workflow/schemas/config.schema.yaml")
