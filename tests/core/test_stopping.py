"""Stopping on a signal (benign.core.stopping): the handler only records the signal, so the
loop stops at the end of its step; ``Stopped`` exits with 75, saying where its checkpoint is."""

import logging
import os
import signal

import pytest

from benign.core import stopping


@pytest.fixture
def handlers():
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGUSR1)}
    yield
    for s, handler in saved.items():
        signal.signal(s, handler)
    stopping.STOP.signal = None


def test_a_signal_is_recorded_not_acted_on(handlers):
    stopping.stop_on_signals()
    os.kill(os.getpid(), signal.SIGUSR1)  # delivered to the main thread before kill returns
    assert stopping.STOP.signal == signal.SIGUSR1
    os.kill(os.getpid(), signal.SIGTERM)  # the process lives on: the loop decides when to stop
    assert stopping.STOP.signal == signal.SIGTERM


def test_stopped_exits_75_and_names_its_checkpoint(caplog):
    with caplog.at_level(logging.WARNING, logger="benign.core.stopping"):
        with pytest.raises(SystemExit) as stop:
            raise stopping.Stopped(signal.SIGTERM, "step 12", "ckpt.pt")
    assert stop.value.code == 75
    assert "stopped by signal 15 at step 12: checkpoint ckpt.pt written" in caplog.text
