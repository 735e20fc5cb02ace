"""Label noise of the real-data protocol (docs/real_protocol.md#label-noise): each label
independently with probability eta moves to a uniformly random other class, nested across eta."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class NestedNoise:
    """One uniform ``u`` and one uniformly random other class per sample.

    A label is flipped at rate eta when ``u < eta``, so the samples flipped at a smaller eta
    are a subset of those flipped at a larger one, and a flipped sample always gets the same
    new class: one draw serves every eta of a seed.
    """

    y: torch.Tensor  # (n,) true class indices
    u: torch.Tensor  # (n,) uniform on [0, 1)
    other: torch.Tensor  # (n,) a class != y, uniform among the others

    def flipped(self, eta: float) -> torch.Tensor:
        if not 0 <= eta <= 1:
            raise ValueError(f"eta must be in [0, 1], got {eta!r}")
        return self.u < eta

    def labels(self, eta: float) -> torch.Tensor:
        """The labels trained on at noise rate ``eta``."""
        return torch.where(self.flipped(eta), self.other, self.y)


def draw_nested_noise(y: torch.Tensor, num_classes: int, generator: torch.Generator) -> NestedNoise:
    """Draw the label noise of class-index labels ``y`` (values 0..num_classes-1) for every eta at once."""
    if num_classes < 2:
        raise ValueError(f"label noise needs at least 2 classes, got {num_classes}")
    y = y.long()
    if y.numel() and (y.min() < 0 or y.max() >= num_classes):
        raise ValueError(f"labels must lie in 0..{num_classes - 1}")
    u = torch.rand(y.numel(), generator=generator, dtype=torch.float64)
    offset = torch.randint(1, num_classes, (y.numel(),), generator=generator)
    return NestedNoise(y=y, u=u, other=(y + offset) % num_classes)
