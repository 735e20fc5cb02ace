"""The rules' conda environment (benign/plan/environment.py): written from the requirement files,
it holds every runtime requirement of the package, and a requirement left out of it fails here."""

import re

import pytest

from benign.plan import environment

tomllib = pytest.importorskip("tomllib")  # Python 3.11+


def runtime() -> set[str]:
    """The package's runtime requirements (pyproject.toml: its dependencies and its real-data
    extra), normalised."""
    project = tomllib.loads((environment.ROOT / "pyproject.toml").read_text())["project"]
    return {environment.name(r) for r in [*project["dependencies"], *project["optional-dependencies"]["real"]]}


def missing(env: str, post_deploy: str) -> set[str]:
    """The runtime requirements that neither the environment's pins nor its post-deploy install."""
    pins = re.findall(r"^\s+- ([A-Za-z0-9_.\-]+)==", env, re.M)
    pins += re.findall(r"([A-Za-z0-9_.\-]+)==", post_deploy.split("--no-deps", 1)[-1])
    return runtime() - {environment.name(p) for p in pins}


def test_the_committed_environment_is_the_one_written_from_the_requirement_files():
    assert environment.ENV.read_text() == environment.env_text(), "run: python -m benign env --write"
    assert environment.POST_DEPLOY.read_text() == environment.post_deploy_text(), "run: python -m benign env --write"


def test_every_runtime_requirement_is_in_the_environment():
    assert missing(environment.ENV.read_text(), environment.POST_DEPLOY.read_text()) == set()


def test_a_requirement_left_out_is_found():
    env = environment.env_text().replace("      - statsmodels==", "      - not-statsmodels==")
    post = environment.post_deploy_text().replace("lifelines==", "x==")
    assert missing(env, post) == {"statsmodels", "lifelines"}


def test_the_workflows_own_tools_stay_out_of_the_rules_environment():
    pinned = {environment.name(p) for p in environment.requirements(environment.PINNED)}
    env = environment.env_text()
    assert environment.TOOLS <= pinned  # each is a requirement of setup.sh, kept out on purpose
    assert not [t for t in environment.TOOLS if re.search(rf"^\s+- {t}==", env, re.M)]
