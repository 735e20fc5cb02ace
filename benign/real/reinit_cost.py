"""What re-initialising the final layer's query and key costs phase 2 at its start
(docs/real_protocol.md#the-cost-of-re-initialisation).

Phase 2 starts from the phase-1 head but from freshly drawn query and key, so its epoch-0 test
accuracy (``records``) falls from the baseline towards what uniform attention gives. Two numbers
explain how far:

- ``uniform_accuracy``: the test accuracy of the phase-1 head when position 0 attends
  uniformly to every real token (the limit of a random query/key with small scores);
- ``attention_share``: with the backbone's own query and key, the mean over test samples of
  |branch| / (|branch| + |residual|) at position 0, the share of what enters the rest of the
  layer that attention carries. The larger it is, the more of the head's input phase 2 must
  rebuild from n samples.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

from benign.real.final_layer import FinalBlock, Head

Chunks = Iterable[tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]]


@torch.no_grad()
def uniform_accuracy(block: FinalBlock, head: Head, chunks: Chunks, batch_size: int = 256) -> float:
    """Test accuracy of ``head`` on the layer's output with uniform attention at position 0."""
    correct, total = 0, 0
    for hidden, mask, y in chunks:
        for rows in torch.arange(len(y)).split(batch_size):
            out = block.uniform(hidden[rows], mask[rows] if mask is not None else None)
            correct += int((head(out).argmax(-1) == y[rows].to(out.device)).sum())
        total += len(y)
    return correct / total


@torch.no_grad()
def attention_share(block: FinalBlock, chunks: Chunks, batch_size: int = 256) -> float:
    """Mean over test samples of the attention branch's share of the position-0 norm, with the layer's own query and key."""
    shares, total = 0.0, 0
    for hidden, mask, y in chunks:
        for rows in torch.arange(len(y)).split(batch_size):
            branch, residual = block.streams(hidden[rows], mask[rows] if mask is not None else None)
            b, r = branch.norm(dim=-1), residual.norm(dim=-1)
            shares += float((b / (b + r)).sum())
        total += len(y)
    return shares / total
