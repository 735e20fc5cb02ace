"""config/README.md against the config it documents: every default its tables quote for a key
that holds a plain value (a number, a name, a list of them) is that key's value in
config/config.yaml, or its schema default where the file leaves it out. A compound key's
default is read in config/config.yaml itself, so the README holds no second copy of it."""

import copy
import re

import pytest
import yaml

from benign.plan.load import load
from benign.plan.schema import PATH
from tests.helpers.workflow_utils import ROOT

SECTION = re.compile(r"^## `(\w+)`", re.M)
ROW = re.compile(r"^\| `([\w.]+)` \| .* \| ([^|]+) \|$", re.M)


def quoted_defaults() -> list[tuple[str, str]]:
    """(block.key, the default as written) of each three-column row naming one key."""
    text = (ROOT / "config/README.md").read_text()
    marks = [(m.start(), m[1]) for m in SECTION.finditer(text)]
    rows = []
    for k, (start, block) in enumerate(marks):
        end = marks[k + 1][0] if k + 1 < len(marks) else len(text)
        rows += [(f"{block}.{key}", value.strip()) for key, value in ROW.findall(text[start:end])]
    return rows


def written(value) -> str:
    """A config value as the README writes it: lists joined by ", ", floats as YAML writes them."""
    if isinstance(value, list):
        return ", ".join(written(v) for v in value)
    return "null" if value is None else str(value)


@pytest.fixture(scope="module")
def config():
    cfg = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    load(cfg, PATH)  # the schema's defaults filled in
    return cfg


def test_every_plain_default_the_readme_quotes_is_the_configs(config):
    checked, compound = 0, []
    for key, quoted in quoted_defaults():
        value = copy.deepcopy(config)
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if isinstance(value, dict):
            compound.append(key)
            assert "config.yaml" in quoted, (
                f"{key}: its default is a block; say where it is read, not a copy: {quoted!r}"
            )
            continue
        if value is None and quoted != "null":
            continue  # a key the default config leaves unset (or several keys in one row)
        assert quoted == written(value), f"config/README.md quotes {key} = {quoted!r}; config/config.yaml has {value!r}"
        checked += 1
    assert checked >= 15 and "synthetic.boundary_fits" in compound
