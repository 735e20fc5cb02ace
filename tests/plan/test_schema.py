"""The config schema is the one owner of every key's type, bounds, default and description: the
file the workflow reads is generated whole (benign/plan/schema.py) and current, validation
adds nothing to it, every config file passes it, and no module reads a key with a default of
its own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from snakemake.utils import update_config

from benign.plan import schema
from benign.plan.validate import validate_config
from benign.real import registry as real_registry
from benign.synthetic import registry, spec

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ["config.yaml", "smoke.yaml", "full.yaml", "paper.yaml", "faithful.yaml", "atlas_only.yaml"]


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
    assert kind["enum"] == list(real_registry.SOURCE_KINDS)
    assert real["backbones"]["additionalProperties"]["properties"]["kind"]["enum"] == list(real_registry.BACKBONE_KINDS)
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


def test_the_regime_thresholds_default_from_the_schema():
    from benign.analysis.theory import Criteria
    from benign.plan.schema import default

    regime = yaml.safe_load(schema.PATH.read_text())["properties"]["synthetic"]["properties"]["regime"]
    assert Criteria(**default("synthetic.regime")) == Criteria(
        **{k: v["default"] for k, v in regime["properties"].items()}
    )
    with pytest.raises(TypeError):
        Criteria()  # no thresholds of its own


def _defaulted_keys() -> set[str]:
    """The keys that have a schema default wherever they occur."""
    with_default, without = set(), set()
    for _, node in nodes(schema.load()):
        for key, sub in (node.get("properties") or {}).items():
            (with_default if isinstance(sub, dict) and "default" in sub else without).add(key)
    return with_default - without


SOURCES = sorted(
    p
    for folder in ("benign", "workflow", "benchmarks")
    for p in (ROOT / folder).rglob("*")
    if p.suffix in (".py", ".smk")
)


def test_no_module_reads_a_config_key_with_a_default_of_its_own():
    """Validation fills in the schema's defaults before anything reads the config, so a
    ``.get(key, default)`` could only restate, or contradict, the schema."""
    keys = _defaulted_keys()
    assert {"checkpoint_every", "batches_per_job", "record_epochs", "fit_threshold"} <= keys
    pattern = re.compile(r"""\.get\(\s*["'](""" + "|".join(sorted(keys)) + r""")["']\s*,""")
    found = [
        f"{path.relative_to(ROOT)}:{k}: {line.strip()}"
        for path in [*SOURCES, ROOT / "Snakefile"]
        for k, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == []


def test_no_description_is_split_by_a_comma_of_a_flow_mapping():
    """A YAML flow mapping cuts an unquoted description at its first comma and makes the rest a
    key with no value: no key of the schema's source is such a fragment."""
    import yaml

    from benign.plan import schema

    fragments = []

    def walk(node, path):
        if isinstance(node, dict):
            for key, value in node.items():
                if value is None and isinstance(key, str) and " " in key:
                    fragments.append(".".join(map(str, path + [key])))
                walk(value, path + [key])
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, path + [i])

    walk(yaml.safe_load(schema.SOURCE.read_text()), [])
    assert fragments == []
