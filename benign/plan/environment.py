"""The rules' software environment (``--software-deployment-method conda``), written from the
requirement files that setup.sh installs, so that the two cannot disagree.

``workflow/envs/benign.yaml`` pins, through pip inside conda's Python, every package of
requirements.txt that a rule's script needs (the workflow's and the tests' own tools left out:
Snakemake runs the rules, and injects itself into their scripts); the packages installed without
their dependencies (requirements-nodeps.txt, requirements-assets.txt: their declared pins would
refuse the others) go into ``benign.post-deploy.sh``, which Snakemake runs in the new
environment. ``python -m benign env --write`` writes both; a test holds them to the files.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENV = ROOT / "workflow/envs/benign.yaml"
POST_DEPLOY = ENV.with_name("benign.post-deploy.sh")
PINNED = ROOT / "requirements.txt"
WITHOUT_DEPS = (ROOT / "requirements-nodeps.txt", ROOT / "requirements-assets.txt")
# what runs the workflow or checks the code, not what a rule's script imports
TOOLS = {"snakemake", "snakemake-executor-plugin-slurm", "snakefmt", "pytest", "ruff", "import-linter", "grimp"}
PYTHON = "3.11"


def requirements(path: Path) -> list[str]:
    """The pins of a requirement file (``name==version``), comments and blank lines left out."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line]


def name(pin: str) -> str:
    """A pin's distribution name, normalised (PEP 503)."""
    return re.sub(r"[-_.]+", "-", re.split(r"[<>=!~\[ ;]", pin, maxsplit=1)[0]).lower()


def env_text() -> str:
    """``benign.yaml``: conda's Python and the runtime pins of requirements.txt."""
    pins = [p for p in requirements(PINNED) if name(p) not in TOOLS]
    lines = [
        "# Environment of every rule (--software-deployment-method conda), written by",
        "# `python -m benign env --write` from requirements.txt (benign/plan/environment.py); the",
        "# packages installed without their dependencies are in benign.post-deploy.sh.",
        "channels:",
        "  - conda-forge",
        "dependencies:",
        f"  - python={PYTHON}",
        "  - pip",
        "  - pip:",
        *(f"      - {p}" for p in pins),
    ]
    return "\n".join(lines) + "\n"


def post_deploy_text() -> str:
    """``benign.post-deploy.sh``: the pins installed without their dependencies."""
    pins = [p for path in WITHOUT_DEPS for p in requirements(path)]
    return "\n".join([
        "#!/usr/bin/env bash",
        "# Run by Snakemake in the rules' new environment (written by `python -m benign env --write`",
        "# from requirements-nodeps.txt and requirements-assets.txt: their declared dependencies",
        "# would refuse the pins of requirements.txt).",
        "set -euo pipefail",
        "python -m pip install --no-deps " + " ".join(pins),
    ]) + "\n"  # fmt: skip


def write() -> list[Path]:
    """Write both files; their paths."""
    ENV.write_text(env_text())
    POST_DEPLOY.write_text(post_deploy_text())
    POST_DEPLOY.chmod(0o755)
    return [ENV, POST_DEPLOY]
