"""A configuration read whole: checked (schema defaults filled in, then the checks across keys,
then every composed run), and only then planned, in one call.

The workflow calls :func:`load` at parse time and the tests call it in process, so a bad value
is refused by the same code, before any job, with the same message. Torch-free.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benign.plan import jobs as plan
from benign.plan import resources as rs
from benign.plan import validate as cv


@dataclass(frozen=True)
class Plan:
    """What a valid configuration asks for (benign.plan.jobs)."""

    cluster: rs.Cluster  # device kind and the site's ceilings (a profile sets them)
    synthetic_jobs: dict  # {job id: [run dicts]}, split to fit the ceilings
    real_cells: dict
    real_needs: dict
    feature_parts: dict  # a data set's feature cache, in parts that fit the ceilings
    max_margin_runs: dict  # the attention-SVM check's runs, per model
    warnings: list[str]  # legal but suspicious values, each naming its key


def load(cfg: dict, schema_path: str | Path) -> Plan:
    """Check ``cfg`` (filling in the schema's defaults, in place) and plan its jobs; a
    :class:`benign.plan.ConfigError` naming the key and the value otherwise."""
    cv.validate_config(cfg, schema_path)  # the schema: every key's type, bounds, default
    cv.drop_switched_off(cfg)  # a sweep with skip: true is as if it were not there
    cv.check_config(cfg)  # across keys, before anything is planned
    groups, mm_runs = plan.synthetic_groups(cfg), plan.max_margin_runs(cfg)
    cv.check_runs(groups, mm_runs)  # every composed run, before any job is packed
    cluster = rs.cluster_settings(cfg)
    jobs = plan.synthetic_jobs(cfg, groups)
    cells = plan.real_cells(cfg)
    needs = plan.real_needs(cfg, cells)
    parts = plan.feature_parts(cfg, cells)
    return Plan(cluster, jobs, cells, needs, parts, mm_runs, cv.warnings(cfg))
