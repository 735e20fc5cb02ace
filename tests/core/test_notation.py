"""The paper's symbols (benign.core.notation): one pair per parameter, and what the run spec and
the tables write is taken from here."""

from benign.core import notation
from benign.synthetic import spec


def test_each_symbol_has_its_text_and_its_mathtext():
    assert notation.TEXT["eta"] == "η" and notation.TEX["eta"] == r"$\eta$"
    assert notation.TEXT["signal_norm"] == "‖μ‖" and notation.TEX["signal_norm"] == r"$\Vert\mu\Vert$"
    for name, (text, tex) in notation.SYMBOLS.items():
        assert text and tex.startswith("$") and tex.endswith("$"), name


def test_the_run_spec_writes_the_shared_parameters_with_these_symbols():
    for name in set(notation.SYMBOLS) & set(spec.SYMBOLS):
        assert spec.SYMBOLS[name] == notation.TEXT[name] and spec.TEX[name] == notation.TEX[name], name
