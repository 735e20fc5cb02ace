"""Every run number in docs/regimes.md is read from the run: a decimal number there must appear in
docs/results.md (the default run's summary, copied as written), be a value of the default config
(an input, not a result), or be one that a named test computes (:data:`COMPUTED`: the test's
file holds the number). A number of a superseded run fails here."""

import re

import pytest

from tests.helpers.workflow_utils import ROOT

DECIMAL = re.compile(r"(?<![\w.^/])[-+]?\d+\.\d+(?![\w.])")  # 0.84, -0.25, +0.006; not 10^3, v1.2.3, 2^(1/16)
NUMBERED = re.compile(r"\b(Theorem|Remark|Lemma|Section|Figure|Table|Corollary|Assumption) \d+(\.\d+)*")  # the paper's
# {number as written in docs/regimes.md: the test (file::name) that computes it and prints it
# (``pytest -s`` shows it; the test's body holds a print) or holds it as a literal}
COMPUTED = {
    "0.973": "tests/test_gap_growth.py::test_a_high_r2_cannot_tell_the_clocks_apart_but_the_local_exponent_can",
    "0.963": "tests/test_gap_growth.py::test_a_high_r2_cannot_tell_the_clocks_apart_but_the_local_exponent_can",
    "0.091": "tests/test_boundaries.py::test_the_margin_is_what_half_a_power_of_ln_d_adds_to_an_exponent_of_d",
    "0.31": "tests/test_boundaries.py::test_the_margin_is_what_half_a_power_of_ln_d_adds_to_an_exponent_of_d",
}


def numbers(text: str) -> list[str]:
    """The decimal numbers of ``text`` outside code spans and code blocks."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"`[^`]*`", " ", text)
    text = NUMBERED.sub(" ", text)
    return [m.lstrip("+") for m in DECIMAL.findall(text)]


def sources() -> str:
    return (ROOT / "docs/results.md").read_text() + (ROOT / "config/config.yaml").read_text()


def test_every_number_of_the_regimes_page_is_read_from_the_run():
    known = set(numbers(sources())) | {n.lstrip("-") for n in numbers(sources())}
    found = numbers((ROOT / "docs/regimes.md").read_text())
    stale = sorted({n for n in found if n not in known and n.lstrip("-") not in known and n not in COMPUTED})
    assert not stale, f"numbers in docs/regimes.md that no table of the run prints: {stale}"


@pytest.mark.parametrize("number, test", sorted(COMPUTED.items()))
def test_a_computed_number_is_in_the_test_that_computes_it(number, test):
    path, name = test.split("::")
    text = (ROOT / path).read_text()
    assert f"def {name}(" in text, f"{test} does not exist"
    body = text.split(f"def {name}(")[1].split("\ndef ")[0]
    assert number in body or "print(" in body, f"{test} neither holds nor prints {number}"
