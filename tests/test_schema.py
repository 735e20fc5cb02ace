"""The config schema is the one owner of every key's type, bounds, default and description: the
file the workflow reads is generated whole (benign/config/schema.py) and current, validation
adds nothing to it, and every config file passes it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from snakemake.utils import update_config

from benign.config import schema
from benign.config.validate import validate_config
from benign.core import registry
from benign.synthetic import spec

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ["config.yaml", "smoke.yaml", "full.yaml", "paper.yaml", "faithful.yaml"]


def nodes(node, path=()):
    """Every mapping in the schema, with its path."""
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from nodes(value, (*path, key))
    elif isinstance(node, list):
        for k, value in enumerate(node):
            yield from nodes(value, (*path, k))


def test_the_generated_schema_is_current():
    assert schema.PATH == ROOT / "workflow/schemas/config.schema.yaml"
    assert schema.PATH.read_text() == schema.text(), f"run {schema.COMMAND}"


def test_the_schema_is_complete_as_written():
    """Validation reads the file as it is: no mapping of properties left empty to be filled in,
    the registry's models and kinds written out, every reference resolved within the file."""
    full = yaml.safe_load(schema.PATH.read_text())
    assert schema.load() == full
    for path, node in nodes(full):
        assert node.get("properties", True) != {}, f"empty properties at {'/'.join(map(str, path))}"
    synthetic = full["properties"]["synthetic"]["properties"]
    assert set(registry.MODELS) <= set(synthetic)
    assert list(synthetic["defaults"]["properties"]) == list(spec.DEFAULT_KEYS)
    real = full["properties"]["real"]["properties"]
    kind = real["datasets"]["additionalProperties"]["properties"]["source"]["properties"]["kind"]
    assert kind["enum"] == list(registry.SOURCE_KINDS)
    assert real["backbones"]["additionalProperties"]["properties"]["kind"]["enum"] == list(registry.BACKBONE_KINDS)
    for path, node in nodes(full):
        if isinstance(node.get("$ref"), str):
            target = full
            for part in node["$ref"].removeprefix("#/").split("/"):
                target = target[part]
            assert isinstance(target, dict), (path, node["$ref"])


@pytest.mark.parametrize("name", CONFIGS)
def test_every_config_file_validates(name):
    """Each file as the workflow reads it: over config/config.yaml, as Snakemake merges them."""
    cfg = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    update_config(cfg, yaml.safe_load((ROOT / "config" / name).read_text()))
    validate_config(cfg)
