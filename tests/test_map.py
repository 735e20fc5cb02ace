"""Where each module of benign is tested, so a reader can find it: a test module that imports it
(most often tests/test_<name>.py, or tests/real/test_real_<name>.py), or, for a module exercised
only through another, the test stated in THROUGH, whose imports reach it. A new module with
neither fails here, and so does a stated test that no longer reaches its module."""

import pkgutil

import benign
from benign.core import fingerprint
from tests.helpers.workflow_utils import ROOT

# {module: the test that exercises it through the modules it imports}, where no test imports it
THROUGH = {
    "benign.core.notation": "tests/test_tables.py",  # the symbols the tables write
    "benign.plan.real_resources": "tests/test_resources.py",  # the real-data jobs' needs
    "benign.real.settings": "tests/real/test_real_protocol.py",  # the protocol's defaults, against the paper's
    "benign.real.sizes": "tests/test_resources.py",  # the feature caches' sizes in the real jobs' needs
    "benign.synthetic.engines": "tests/test_registry.py",  # the engine a cost asks for, resolved by the spec
    "benign.synthetic.speed.cuda_graphs": "tests/test_authors_encoder.py",  # imported by the encoder; replayed on a GPU only
    "benign.synthetic.speed.deferred": "tests/test_authors_encoder.py",  # the encoder's deferred rows
    "benign.analysis.one_step": "tests/test_one_step.py",  # through its table
    "benign.artifacts.real": "tests/test_artifacts.py",  # the artifact table's real half
    "benign.analysis.delay_scan": "tests/test_tables.py",  # through the delay-scan table
}
# {module: why}, for a module with no behaviour of its own to test, or drawn only by the workflow
# (the render of its half, which the smoke run's tests read: tests/test_smoke_tables.py)
ELSEWHERE = {
    "benign.synthetic.models.interface": "the Protocol the models implement: types, no behaviour",
}


def modules() -> list[str]:
    found = pkgutil.walk_packages([str(ROOT / "benign")], prefix="benign.")
    return sorted(m.name for m in found if not m.ispkg and not m.name.endswith(".__main__"))


def test_every_module_is_tested_where_a_reader_finds_it():
    assert benign.__file__.startswith(str(ROOT))
    tests = sorted(ROOT.glob("tests/**/test_*.py"))
    imported = set().union(*(fingerprint.imports(t) for t in tests))
    assert [m for m in modules() if m not in imported and m not in THROUGH and m not in ELSEWHERE] == []
    for module, test in THROUGH.items():
        assert module not in imported, f"{module}: a test imports it now; drop it from THROUGH"
        assert module in fingerprint.closure(ROOT / test), f"{test} does not reach {module}"
    rendered = fingerprint.closure(ROOT / "workflow/scripts/render.py", "benign.artifacts.synthetic")
    for module in ELSEWHERE:
        assert module not in imported, f"{module}: a test imports it now; drop it from ELSEWHERE"
        assert module in rendered or module.endswith(".interface"), module
