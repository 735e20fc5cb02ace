"""The layers contract (pyproject.toml [tool.importlinter], docs/layout.md): the package as it is
keeps it, and a wrong-way import planted in a copy of it breaks it, naming the import."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

LINT = Path(sys.executable).with_name("lint-imports")
# (module edited, the import planted in it): each points up the layers or across a pair of
# layers that never import each other
PLANTED = [
    ("benign/core/io.py", "benign.synthetic.spec"),
    ("benign/synthetic/spec.py", "benign.analysis.theory"),
    ("benign/real/protocol.py", "benign.synthetic.data_model"),
    ("benign/synthetic/trainer.py", "benign.real.records"),
    ("benign/analysis/theory.py", "benign.config.plan"),
    ("benign/figures/heatmaps.py", "benign.tables.boundaries"),
    ("benign/tables/boundaries.py", "benign.config.artifacts"),
]


def lint(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(LINT), "--no-cache"], cwd=root, env={"PYTHONPATH": str(root)},
                          capture_output=True, text=True)  # fmt: skip


def test_the_package_keeps_its_layers(root):
    result = lint(root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout


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
