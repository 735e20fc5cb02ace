"""A training step replayed as CUDA graphs: the same kernels on the same buffers, without a
Python and launch overhead per kernel (which dominates for small models)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable

import torch

from benign.synthetic.speed import settings

log = logging.getLogger("benign.synthetic.speed")


class GraphedStep:
    """Calls ``step`` through CUDA graphs, one per state it starts from.

    ``state()`` names the state that decides what ``step`` does (the encoder's pending-update
    counts), ``restore(state)`` sets it back. Each state's step is captured once, after a few
    eager warm-up steps, and replayed from then on; at most ``settings.MAX_GRAPHS`` graphs, other
    states step eagerly. Where capture fails, every later step is eager, with the same numbers.
    The graphs share one memory pool (their replays never overlap). A replay returns the
    captured output buffers, which a later step overwrites.
    """

    def __init__(self, step: Callable[[], tuple], state: Callable[[], Hashable], restore: Callable[[Hashable], None],
                 device: torch.device) -> None:  # fmt: skip
        self.step, self.state, self.restore, self.device = step, state, restore, device
        self.graphs: dict[Hashable, tuple[torch.cuda.CUDAGraph, tuple, Hashable]] = {}
        self.enabled = True
        self._pool = None
        self._warm = 0

    def __call__(self) -> tuple:
        if not self.enabled:
            return self.step()
        start = self.state()
        entry = self.graphs.get(start)
        if entry is not None:
            graph, out, after = entry
            graph.replay()
            self.restore(after)
            return out
        if self._warm < settings.WARMUP_STEPS:  # real steps, on a side stream as capture requires
            self._warm += 1
            side = torch.cuda.Stream(self.device)
            side.wait_stream(torch.cuda.current_stream(self.device))
            with torch.cuda.stream(side):
                out = self.step()
            torch.cuda.current_stream(self.device).wait_stream(side)
            return out
        if len(self.graphs) >= settings.MAX_GRAPHS:
            return self.step()
        graph = torch.cuda.CUDAGraph()
        try:
            torch.cuda.synchronize(self.device)
            with torch.cuda.graph(graph, pool=self._pool):  # records the step; nothing runs yet
                out = self.step()
        except RuntimeError as err:
            log.warning("CUDA graph capture failed (%s); stepping without it", err)
            self.restore(start)  # the capture ran nothing
            self.enabled = False
            return self.step()
        if self._pool is None:
            self._pool = graph.pool()
        self.graphs[start] = (graph, out, self.state())
        graph.replay()
        return out
