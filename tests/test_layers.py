"""The layers contract (pyproject.toml [tool.importlinter], docs/layout.md): the package as it is
keeps it, a wrong-way import planted in a copy of it breaks it, naming the import, and no string
names a module or function of a layer above its holder's (a name by string that the contract
cannot see)."""

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from tests.helpers.workflow_utils import ROOT

LINT = Path(sys.executable).with_name("lint-imports")
# (module edited, the import planted in it): each points up the layers or across a pair of
# layers that never import each other
PLANTED = [
    ("benign/core/io.py", "benign.synthetic.spec"),
    ("benign/synthetic/spec.py", "benign.analysis.theory"),
    ("benign/real/protocol.py", "benign.synthetic.data_model"),
    ("benign/synthetic/trainer.py", "benign.real.records"),
    ("benign/plan/jobs.py", "benign.tables.common"),
    ("benign/analysis/theory.py", "benign.plan.jobs"),
    ("benign/figures/heatmaps.py", "benign.tables.boundaries"),
    ("benign/tables/boundaries.py", "benign.artifacts.table"),
    ("benign/synthetic/registry.py", "benign.plan.resources"),
    ("benign/artifacts/real.py", "benign.figures.atlas"),
]


def lint(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(LINT), "--no-cache"], cwd=root, env={"PYTHONPATH": str(root)},
                          capture_output=True, text=True)  # fmt: skip


def test_the_package_keeps_its_layers(root):
    result = lint(root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 4 kept, 0 broken" in result.stdout


@pytest.mark.parametrize(("module", "target"), PLANTED)
def test_a_planted_wrong_way_import_breaks_the_contract(root, tmp_path, module, target):
    shutil.copytree(root / "benign", tmp_path / "benign", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(root / "pyproject.toml", tmp_path)
    path = tmp_path / module
    path.write_text(path.read_text() + f"\nimport {target}  # planted\n")
    result = lint(tmp_path)
    source = module.removesuffix(".py").replace("/", ".")
    assert result.returncode != 0, result.stdout
    assert f"{source} -> {target}" in result.stdout, result.stdout


def layer_of(module: str, layers: list[str]) -> int | None:
    """The index of the layer (top first) of ``benign.x...``, None for the package itself."""
    for k, layer in enumerate(layers):
        if any(module == m or module.startswith(m + ".") for m in layer.split(" | ")):
            return k
    return None


# a whole string that names a module of the package, or a function of one ("module:function")
NAME = re.compile(r"benign(\.\w+)+(:\w+)?")


def test_no_string_names_a_layer_above_its_own():
    """Every string constant in benign/ that is a module or "module:function" name (the
    registries' models and backbones, anything resolved by name) points to its own layer or
    below, and names something that exists."""
    contract = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"][0]
    layers = contract["layers"]
    found = []
    for path in sorted((ROOT / "benign").rglob("*.py")):
        holder = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and NAME.fullmatch(node.value):
                found.append((holder, node.value))
                module = node.value.partition(":")[0]
                assert (ROOT / module.replace(".", "/")).with_suffix(".py").is_file() or (
                    ROOT / module.replace(".", "/") / "__init__.py"
                ).is_file(), (holder, node.value)
                own, named = layer_of(holder, layers), layer_of(module, layers)
                assert named is None or own is not None and named >= own, f"{holder} names {node.value} above it"
    assert ("benign.synthetic.registry", "benign.synthetic.models.token_selection") in found  # the scan sees them
