"""Deferred gradient-descent updates of a matrix, kept as low-rank factors."""

from __future__ import annotations

import torch


class Deferred:
    """Gradient-descent updates of one matrix M (used as out = x M), kept as factors and applied
    later in one product: M_now = M - X^T G, where each step appends its input rows x to X and
    its lr-scaled output gradients to G. Folding R rows at once is one well-shaped product
    instead of R/n thin ones, and between folds M is only read."""

    def __init__(self, B: int, d_in: int, d_out: int, rows: int, **kw) -> None:
        self.X = torch.zeros(B, rows, d_in, **kw)
        self.G = torch.zeros(B, rows, d_out, **kw)
        self.r = 0

    def low_rank(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor] | None:
        """(E, F) with x M_now = x M + E F: E = -(x X^T), F = G (None when nothing is pending)."""
        if self.r == 0:
            return None
        return torch.bmm(x, self.X[:, : self.r].transpose(1, 2)).neg_(), self.G[:, : self.r]

    def low_rank_t(self, g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor] | None:
        """(E, F) with g M_now^T = g M^T + E F: E = -(g G^T), F = X."""
        if self.r == 0:
            return None
        return torch.bmm(g, self.G[:, : self.r].transpose(1, 2)).neg_(), self.X[:, : self.r]

    def fits(self, k: int) -> bool:
        return self.r + k <= self.X.shape[1]

    def append(self, x: torch.Tensor, g: torch.Tensor) -> None:
        k = x.shape[1]
        self.X[:, self.r : self.r + k] = x
        self.G[:, self.r : self.r + k] = g
        self.r += k

    def pending(self) -> tuple[torch.Tensor, torch.Tensor]:
        return self.X[:, : self.r], self.G[:, : self.r]
