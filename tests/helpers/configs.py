"""A config file as the workflow reads it: merged over config/config.yaml as ``--configfile``
merges it, checked against the schema (its defaults filled in) and read (benign.plan.load.read)."""

from __future__ import annotations

import yaml
from snakemake.utils import update_config

from benign.plan.config_values import Config
from benign.plan.load import read
from tests.helpers.workflow_utils import ROOT

SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"


def raw(*names: str, **over) -> dict:
    """config/config.yaml with each of ``names`` (files under config/) merged over it, then the
    top-level keys ``over`` set; unchecked."""
    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    for name in names:
        update_config(cfg, yaml.safe_load((ROOT / "config" / name).read_text()) or {})
    cfg.update(over)
    return cfg


def checked(*names: str, **over) -> Config:
    """:func:`raw`, checked against the schema and read."""
    return read(raw(*names, **over), SCHEMA)
