"""The encoder's speed settings (benign.synthetic.speed.settings): the CUDA ones are read from the
environment, their defaults what has been timed, a bad value refused by name."""

import pytest

from benign.synthetic.speed import settings


def test_cuda_graphs_are_on_unless_switched_off(monkeypatch):
    monkeypatch.delenv("BENIGN_CUDA_GRAPHS", raising=False)
    assert settings.cuda_graphs()
    monkeypatch.setenv("BENIGN_CUDA_GRAPHS", "0")
    assert not settings.cuda_graphs()
    monkeypatch.setenv("BENIGN_CUDA_GRAPHS", "1")
    assert settings.cuda_graphs()


def test_cuda_deferral_is_opt_in(monkeypatch):
    """On CUDA, updates are applied in their step unless BENIGN_CUDA_DEFER_STEPS asks for
    deferral (it has not been timed on a GPU yet); a bad value is named."""
    monkeypatch.delenv("BENIGN_CUDA_DEFER_STEPS", raising=False)
    assert settings.cuda_defer_steps() == 0
    monkeypatch.setenv("BENIGN_CUDA_DEFER_STEPS", "0")
    assert settings.cuda_defer_steps() == 0
    monkeypatch.setenv("BENIGN_CUDA_DEFER_STEPS", "6")
    assert settings.cuda_defer_steps() == 6
    for bad in ("-1", "four", "2.5"):
        monkeypatch.setenv("BENIGN_CUDA_DEFER_STEPS", bad)
        with pytest.raises(ValueError, match=repr(bad)):
            settings.cuda_defer_steps()
