"""One owner per fact, where a second owner can be seen in the source: the step-size formula, the
named settings, the engine choice, the label-noise rate's symbol and the job-id prefix are each
defined once; the package data that pyproject.toml ships exists; the regimes and the config's
named settings are the same three."""

import glob
import re
import shutil
from pathlib import Path

import tomllib

from benign.analysis import theory
from benign.synthetic import spec
from tests.helpers.workflow_utils import ROOT

# (what, a pattern that writes the fact, its one owner)
FACTS = [
    ("lr = step_size / (sigma^2 d)", r"/\s*\(\s*sigma\s*\*\*\s*2\s*\*\s*d\s*\)", "benign/synthetic/spec.py"),
    ("the config's named settings", r"^\s*NAMED_SETTINGS\s*=", "benign/synthetic/spec.py"),
    ("the engines", r"^\s*ENGINES\s*=", "benign/synthetic/engines.py"),
    ("the Gram engine's least d", r"^def gram_min_d\b", "benign/synthetic/engines.py"),
    ("the integrators", r"^\s*INTEGRATORS\s*=", "benign/synthetic/flow.py"),
    ("the label-noise rate's symbol", r"η|\\eta\b", "benign/core/notation.py"),
    ("the job-id prefix", r'f"\{model\}_\{', "benign/plan/jobs.py"),
]


def writers(pattern: str, root: Path = ROOT) -> list[str]:
    found = []
    for path in sorted((root / "benign").rglob("*.py")):
        if re.search(pattern, path.read_text(), flags=re.MULTILINE):
            found.append(str(path.relative_to(root)))
    return found


def test_each_fact_is_written_by_its_one_owner():
    for what, pattern, owner in FACTS:
        assert writers(pattern) == [owner], what


def test_the_check_sees_a_second_owner(tmp_path):
    """The scan is not blind: a copy of the formula planted in a copy of the package is found."""
    shutil.copytree(ROOT / "benign", tmp_path / "benign", ignore=shutil.ignore_patterns("__pycache__"))
    planted = tmp_path / "benign" / "analysis" / "planted.py"
    planted.write_text("def lr(step, sigma, d):\n    return step / (sigma**2 * d)\n")
    assert writers(FACTS[0][1], tmp_path) == ["benign/analysis/planted.py", "benign/synthetic/spec.py"]


def test_the_shipped_package_data_exists():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    for package, patterns in data.items():
        for pattern in patterns:
            assert glob.glob(str(ROOT / package / pattern)), f"{package}: {pattern}"


def test_the_named_settings_are_the_regimes():
    assert set(spec.NAMED_SETTINGS) == set(theory.REGIMES) and len(theory.REGIMES) == 3
