"""Stopping a training job on a signal, so that its retry resumes it (docs/cluster.md#time-limits).

SLURM sends SIGTERM at a job's time limit, or a USR1 notice before it when the site asks for
one. A job script calls :func:`stop_on_signals` once; the training loops check ``STOP`` at the
end of each step (synthetic) or epoch (real data), write their checkpoint and raise
:class:`Stopped`, which exits with status 75.
"""

from __future__ import annotations

import logging
import signal
from dataclasses import dataclass

log = logging.getLogger(__name__)


class Stopped(SystemExit):
    """A job stopped by a signal (SLURM's SIGTERM at its time limit, or a USR1 notice sent
    before it): its running batch is checkpointed, so the retry resumes it. Exits with 75."""

    def __init__(self, signum: int, at: str, checkpoint):
        where = f"checkpoint {checkpoint} written" if checkpoint is not None else "no checkpoint (none configured)"
        log.warning("stopped by signal %d at %s: %s; a retry resumes from it", signum, at, where)
        super().__init__(75)


@dataclass
class _Stop:
    signal: int | None = None


STOP = _Stop()  # set by the handler of :func:`stop_on_signals`


def stop_on_signals(signums=(signal.SIGTERM, signal.SIGUSR1)) -> None:
    """Make ``signums`` stop training at the end of the current step, after a checkpoint, rather
    than kill it mid-write (a job script calls this once)."""

    def handler(signum, frame):
        STOP.signal = signum

    for signum in signums:
        signal.signal(signum, handler)
