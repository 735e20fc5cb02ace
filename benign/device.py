"""Which torch device to run on: CUDA, else Apple MPS, else CPU."""

from __future__ import annotations

import torch


def pick_device() -> torch.device:
    """The fastest device available here, chosen automatically so configs stay machine-free."""
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")
