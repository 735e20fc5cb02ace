"""Random streams: every random draw of a run comes from its seed and the stream's name, so
that each draw is independent of the others and of how runs are batched."""

from __future__ import annotations

import numpy as np
import torch


def derived_seed(seed: int, stream: str) -> int:
    """An independent 63-bit seed for one random stream ("noise", "flips", "init", ...)."""
    key = [ord(c) for c in stream]
    return int(np.random.SeedSequence([seed, *key]).generate_state(1, dtype=np.uint64)[0] >> 1)


def generator(seed: int, stream: str) -> torch.Generator:
    return torch.Generator().manual_seed(derived_seed(seed, stream))
