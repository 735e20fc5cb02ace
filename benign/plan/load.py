"""A configuration read whole: checked (schema defaults filled in), read once into its typed
form (benign.plan.config_values), checked across keys and over every composed run, and only
then planned, in one call.

The workflow calls :func:`load` at parse time and the tests call it in process, so a bad value
is refused by the same code, before any job, with the same message. Torch-free.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benign.plan import config_values
from benign.plan import jobs as plan
from benign.plan import real_resources as real
from benign.plan import resources as rs
from benign.plan import validate as cv


@dataclass(frozen=True)
class Plan:
    """What a valid configuration asks for (benign.plan.jobs), and the configuration as read."""

    cluster: rs.Cluster  # device kind and the site's ceilings (a profile sets them)
    synthetic_jobs: dict  # {job id: [run dicts]}, split to fit the ceilings
    real_cells: dict
    real_needs: dict
    feature_parts: dict  # a data set's feature cache, in parts that fit the ceilings
    max_margin_runs: dict  # the attention-SVM check's runs, per model
    warnings: list[str]  # legal but suspicious values, each naming its key
    config: config_values.Config  # what the planning read (benign.plan.config_values)


def read(cfg: dict, schema_path: str | Path) -> config_values.Config:
    """Check ``cfg`` against its schema (filling in the defaults, in place), drop the sweeps
    switched off, and read it (benign.plan.config_values.read); a
    :class:`benign.plan.ConfigError` naming the key and the value otherwise."""
    cv.validate_config(cfg, schema_path)  # the schema: every key's type, bounds, default
    cv.drop_switched_off(cfg)  # a sweep with skip: true is as if it were not there
    return config_values.read(cfg)


def load(cfg: dict, schema_path: str | Path) -> Plan:
    """Check ``cfg`` (filling in the schema's defaults, in place) and plan its jobs; a
    :class:`benign.plan.ConfigError` naming the key and the value otherwise."""
    config = read(cfg, schema_path)
    cv.check_config(config)  # across keys, before anything is planned
    warnings = cv.warnings(config)
    groups, mm_runs = plan.synthetic_groups(config), plan.max_margin_runs(config)
    cv.check_runs(groups, mm_runs)  # every composed run, before any job is packed
    jobs = plan.synthetic_jobs(config, groups)
    cells = plan.real_cells(config)  # each within the ceilings (benign.plan.real_resources.split_to_fit)
    needs, parts = real.job_needs(config, cells), real.feature_parts(config, cells)
    return Plan(config.cluster, jobs, cells, needs, parts, mm_runs, warnings, config)
