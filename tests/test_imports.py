"""Every module of benign imports on its own, in a fresh interpreter: no import circle that only
works when some other module was imported first. A circle planted in a copy of the package is
caught, naming the module."""

import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import benign
from tests.helpers.workflow_utils import ROOT

RUNNER = ROOT / "tests" / "helpers" / "import_alone.py"


def modules(package_dir: Path) -> list[str]:
    """Every module of the package but its ``__main__`` (which runs the CLI when imported)."""
    found = pkgutil.walk_packages([str(package_dir)], prefix="benign.")
    return sorted(m.name for m in found if not m.name.endswith(".__main__"))


def import_alone(root: Path, names: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(RUNNER), *names], cwd=root, env={"PYTHONPATH": str(root)},
                          capture_output=True, text=True)  # fmt: skip


def test_every_module_of_benign_imports_alone():
    names = modules(Path(benign.__file__).parent)
    assert len(names) > 80 and "benign.synthetic.costs" in names
    result = import_alone(ROOT, names)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_planted_circle_is_caught_naming_the_module(tmp_path):
    shutil.copytree(ROOT / "benign", tmp_path / "benign", ignore=shutil.ignore_patterns("__pycache__"))
    costs = tmp_path / "benign" / "synthetic" / "costs.py"  # costs -> spec -> registry -> costs
    costs.write_text(costs.read_text().replace("from benign.synthetic import flow\n",
                                               "from benign.synthetic import flow, spec\n"))  # fmt: skip
    result = import_alone(tmp_path, ["benign.synthetic.costs", "benign.synthetic.flow"])
    assert result.returncode == 1
    assert result.stdout.startswith("benign.synthetic.costs: ImportError")
    assert "benign.synthetic.flow" not in result.stdout
