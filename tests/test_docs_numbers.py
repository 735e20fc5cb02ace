"""Every run number in docs/ and the README is read from the run: a decimal number there must
appear in docs/results.md (the default run's summary, copied as written), be a value of the
default config (an input, not a result) or a published number of the paper
(benign/tables/reference/), or be one that a named test computes (:data:`COMPUTED`). A number of a
superseded run fails here."""

import re

import pytest

from tests.helpers.workflow_utils import ROOT

DECIMAL = re.compile(r"(?<![\w.^/])[-+]?\d+\.\d+(?!\w|\.\d)")  # 0.84, -0.25, +0.006; not 10^3, v1.2.3, 2^(1/16)
# the paper's numbered statements, and versions: not numbers of a run
NUMBERED = re.compile(r"\b(Theorem|Remark|Lemma|Section|Figure|Table|Corollary|Assumption|Python) \d+(\.\d+)*")
# {number as written in a page: the test (file::name) that computes it and prints it
# (``pytest -s`` shows it; the test's body holds a print) or holds it as a literal}
COMPUTED = {
    "0.973": "tests/analysis/test_gap_growth.py::test_a_high_r2_cannot_tell_the_clocks_apart_but_the_local_exponent_can",
    "0.963": "tests/analysis/test_gap_growth.py::test_a_high_r2_cannot_tell_the_clocks_apart_but_the_local_exponent_can",
    "0.091": "tests/analysis/test_boundaries.py::test_the_margin_is_what_half_a_power_of_ln_d_adds_to_an_exponent_of_d",
    "0.31": "tests/analysis/test_boundaries.py::test_the_margin_is_what_half_a_power_of_ln_d_adds_to_an_exponent_of_d",
    "0.401": "tests/analysis/test_metrics.py::test_token_loss_floor_is_the_spec_value",
    "0.4950": "tests/synthetic/test_max_margin.py::test_tarzanagh_single_input_svm",
    "0.9790": "tests/synthetic/test_max_margin.py::test_toy_gradient_descent_converges_to_pmm",
    "0.9847": "tests/synthetic/test_max_margin.py::test_toy_gradient_descent_converges_to_pmm",
    "0.9884": "tests/synthetic/test_max_margin.py::test_toy_gradient_descent_converges_to_pmm",
    "0.99": "tests/synthetic/test_max_margin.py::test_toy_gradient_descent_converges_to_pmm",
}


def numbers(text: str) -> list[str]:
    """The decimal numbers of ``text`` outside code spans and code blocks."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"`[^`]*`", " ", text)
    text = NUMBERED.sub(" ", text)
    return [m.lstrip("+") for m in DECIMAL.findall(text)]


PAGES = sorted(p.relative_to(ROOT).as_posix() for p in [ROOT / "README.md", *ROOT.glob("docs/*.md")]
               if p.name != "results.md")  # fmt: skip


def sources() -> str:
    files = [ROOT / "docs/results.md", ROOT / "config/config.yaml", *sorted(ROOT.glob("benign/tables/reference/*.csv"))]
    return "".join(f.read_text() for f in files)


@pytest.mark.parametrize("page", PAGES)
def test_every_number_of_a_page_is_read_from_the_run(page):
    known = set(numbers(sources())) | {n.lstrip("-") for n in numbers(sources())}
    found = numbers((ROOT / page).read_text())
    stale = sorted({n for n in found if n not in known and n.lstrip("-") not in known and n not in COMPUTED})
    assert not stale, f"numbers in {page} that no table of the run prints: {stale}"


@pytest.mark.parametrize("number, test", sorted(COMPUTED.items()))
def test_a_computed_number_is_in_the_test_that_computes_it(number, test):
    path, name = test.split("::")
    text = (ROOT / path).read_text()
    assert f"def {name}(" in text, f"{test} does not exist"
    body = text.split(f"def {name}(")[1].split("\ndef ")[0]
    assert number in body or "print(" in body, f"{test} neither holds nor prints {number}"
