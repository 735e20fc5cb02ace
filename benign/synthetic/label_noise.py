"""Label noise of the synthetic protocol (docs/data.md#label-noise): exactly ceil(eta n) binary
labels flipped, half in each class (floor(ceil(eta n) / 2) per class, as the reference code)."""

from __future__ import annotations

import torch

from benign.synthetic.spec import n_flips  # torch-free: the config layer reads it too


def flip_balanced(y: torch.Tensor, eta: float, generator: torch.Generator) -> torch.Tensor:
    """Return a boolean mask of the binary labels ``y`` (values +1/-1) to flip.

    floor(ceil(eta n) / 2) samples are drawn without replacement from each class.
    """
    n = y.numel()
    per_class = n_flips(n, eta) // 2
    mask = torch.zeros(n, dtype=torch.bool)
    for cls in (1, -1):
        idx = torch.nonzero(y == cls).flatten()
        if per_class > idx.numel():
            raise ValueError(f"eta={eta} asks for {per_class} flips in class {cls}, which has {idx.numel()} samples")
        chosen = idx[torch.randperm(idx.numel(), generator=generator)[:per_class]]
        mask[chosen] = True
    return mask
