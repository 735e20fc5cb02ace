"""Every third-party module the package imports is a dependency of pyproject.toml, and every
dependency there is pinned in the requirements files setup.sh installs."""

import ast
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]
PINS = ("requirements.txt", "requirements-nodeps.txt", "requirements-assets.txt")


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {_name(r) for r in project["dependencies"]}
    for extra in project.get("optional-dependencies", {}).values():
        names |= {_name(r) for r in extra}
    return names


def imported_modules() -> set[str]:
    """Top-level names of every module benign/ imports, at module level or inside a function."""
    names = set()
    for path in (ROOT / "benign").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"benign", "__future__"}


def test_every_imported_module_is_a_declared_dependency():
    owners = packages_distributions()
    missing = {}
    for module in imported_modules():
        distributions = {d.lower().replace("_", "-") for d in owners.get(module, [module])}
        if not distributions & declared():
            missing[module] = sorted(distributions)
    assert not missing, f"imported by benign/ but not in pyproject.toml's dependencies: {missing}"


def test_every_declared_dependency_is_pinned():
    pinned = set()
    for name in PINS:
        for line in (ROOT / name).read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line and not line.startswith("-"):
                pinned.add(_name(line))
    assert declared() <= pinned, f"in pyproject.toml but pinned in none of {PINS}: {sorted(declared() - pinned)}"
