"""A configuration read whole (benign.plan.load): checked, its switched-off sweeps dropped, then
planned, in one call; the plan is what the planners give the checked config."""

import copy

import pytest
import yaml
from snakemake.utils import update_config

from benign.plan import ConfigError, jobs, real_resources, validate
from benign.plan.config_values import read, read_cluster
from benign.plan.load import load


@pytest.fixture(scope="module")
def smoke(root) -> dict:
    cfg = yaml.safe_load((root / "config/config.yaml").read_text())
    update_config(cfg, yaml.safe_load((root / "config/smoke.yaml").read_text()))
    return cfg


def test_the_plan_is_the_planners_on_the_checked_config(root, smoke):
    schema = root / "workflow/schemas/config.schema.yaml"
    plan = load(copy.deepcopy(smoke), schema)
    cfg = copy.deepcopy(smoke)
    validate.validate_config(cfg, schema)
    validate.drop_switched_off(cfg)
    config = read(cfg)
    cells = jobs.real_cells(config)
    assert plan.synthetic_jobs == jobs.synthetic_jobs(config) and plan.real_cells == cells
    assert plan.real_needs == real_resources.job_needs(config, cells)
    assert plan.feature_parts == real_resources.feature_parts(config, cells)
    assert plan.max_margin_runs == jobs.max_margin_runs(config) and plan.cluster == config.cluster == read_cluster(cfg)
    assert plan.synthetic_jobs and plan.real_cells and plan.warnings == []


def test_a_sweep_switched_off_is_not_planned_and_a_bad_value_is_refused(root, smoke):
    schema = root / "workflow/schemas/config.schema.yaml"
    cfg = copy.deepcopy(smoke)
    update_config(cfg, {"synthetic": {"token": {"sweeps": {"heatmap": {"skip": True}}}}})
    assert not [job for job in load(cfg, schema).synthetic_jobs if job.startswith("token_heatmap")]
    bad = copy.deepcopy(smoke)
    bad["synthetic"]["defaults"]["eta"] = 1.5
    with pytest.raises(ConfigError, match=r"config key synthetic.defaults.eta = 1.5: must be < 1"):
        load(bad, schema)
