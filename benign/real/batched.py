"""Many phase-2 runs trained as one program (docs/real_protocol.md#phase-2-many-runs-at-once).

Runs that share a data set, a backbone and n (any seeds and noise rates) take the same number
of optimiser steps, so their query and key parameters are stacked along a leading run axis
and trained together through :meth:`FinalBlock.forward_runs`. Each run keeps what the
one-run path (``benign.real.protocol.finetune_query_key``) gives it: its own fine-tuning rows,
noisy labels, head, query/key initialisation and batch order (its own generators), its loss
as the mean over its own batch, gradient clipping by its own norm, and its own AdamW state
(AdamW is elementwise, so stacking does not mix runs). Only the products get larger: one
program of R runs streams the frozen layer's weights once per step instead of R times.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from benign.real.backbones import reinit_linear
from benign.real.final_layer import FinalBlock, Head
from benign.real.trainer import Epoch, TrainConfig

log = logging.getLogger("benign.real")


@dataclass
class Run:
    """One phase-2 run of a batch: which stacked training set it reads (one per seed), its
    noisy labels (n,), its phase-1 head and its generators ("real_qk_init",
    "real_finetune_shuffle" of its seed)."""

    train_set: int
    labels: torch.Tensor
    head: Head
    init: torch.Generator
    shuffle: torch.Generator


@dataclass
class RunResult:
    history: list[Epoch]
    train_loss: float  # evaluated after training, against the noisy labels
    train_acc: float
    test_loss: float
    test_acc: float


class Heads:
    """The runs' frozen phase-1 heads, stacked: pooler (BERT) then classifier, per run."""

    def __init__(self, heads: Sequence[Head]):
        self.pooler = None
        if heads[0].pooler is not None:
            self.pooler = (
                torch.stack([h.pooler.weight for h in heads]).detach(),
                torch.stack([h.pooler.bias for h in heads]).detach(),
            )
        self.weight = torch.stack([h.classifier.weight for h in heads]).detach()  # (R, C, d)
        self.bias = torch.stack([h.classifier.bias for h in heads]).detach()  # (R, C)

    def __call__(self, features: torch.Tensor) -> torch.Tensor:
        """(R, B, d) -> logits (R, B, C)."""
        if self.pooler is not None:
            weight, bias = self.pooler
            features = torch.tanh(torch.baddbmm(bias[:, None], features, weight.transpose(1, 2)))
        return torch.baddbmm(self.bias[:, None], features, self.weight.transpose(1, 2))


def _initial_query_key(block: FinalBlock, runs: Sequence[Run]) -> list[torch.Tensor]:
    """Stacked (query weight, query bias or none, key weight), each run drawn as the one-run path
    draws it: query then key, PyTorch's default Linear initialisation, from the run's generator."""
    d = block.cfg.hidden_size
    weights_q, biases_q, weights_k = [], [], []
    for run in runs:
        query = nn.Linear(d, d, bias=block.query.bias is not None, dtype=block.query.weight.dtype)
        key = nn.Linear(d, d, bias=block.key.bias is not None, dtype=block.key.weight.dtype)
        reinit_linear(query, run.init)
        reinit_linear(key, run.init)  # its bias is drawn too (the stream matches) and never used
        weights_q.append(query.weight.detach())
        biases_q.append(query.bias.detach() if query.bias is not None else None)
        weights_k.append(key.weight.detach())
    device = block.query.weight.device
    out = [torch.stack(weights_q).to(device)]
    out.append(torch.stack(biases_q).to(device) if biases_q[0] is not None else None)
    out.append(torch.stack(weights_k).to(device))
    return [p.requires_grad_(True) if p is not None else None for p in out]


def _forward(block, heads, params, hidden, mask, sets, rows):
    """Logits (R, B, C) and attention (R, B, H, T) of each run's ``rows`` (R, B) of its set
    ``hidden[sets[r]]``."""
    picked = hidden[sets[:, None], rows]
    picked_mask = mask[sets[:, None], rows] if mask is not None else None
    out, attention = block.forward_runs(picked, picked_mask, params[0], params[1], params[2])
    return heads(out), attention


def _clip_per_run(params: list[torch.Tensor], max_norm: float) -> None:
    """torch.nn.utils.clip_grad_norm_ applied to each run's gradients on their own."""
    grads = [p.grad for p in params if p is not None]
    norms = torch.sqrt(sum(g.pow(2).flatten(1).sum(1) for g in grads))  # (R,)
    coef = torch.clamp(max_norm / (norms + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef.view(-1, *([1] * (g.dim() - 1))))


def finetune_runs(
    block: FinalBlock,
    runs: Sequence[Run],
    train_hidden: torch.Tensor,
    train_mask: torch.Tensor | None,
    test_set: tuple[torch.Tensor, torch.Tensor | None, torch.Tensor],
    cfg: TrainConfig,
    name: str = "phase 2",
) -> list[RunResult]:
    """Phase 2 for every run at once. ``train_hidden`` (S, n, T, d) and ``train_mask`` (S, n, T):
    the final-layer inputs of each seed's fine-tuning rows (a run reads ``train_hidden[run.train_set]``);
    ``test_set``: (inputs (N, T, d), mask or None, labels (N,)), shared by every run."""
    R, n = len(runs), train_hidden.shape[1]
    device = train_hidden.device
    sets = torch.tensor([run.train_set for run in runs], device=device)
    labels = torch.stack([run.labels for run in runs]).to(device)  # (R, n)
    heads = Heads([run.head for run in runs])
    params = _initial_query_key(block, runs)
    trained = [p for p in params if p is not None]
    steps = cfg.epochs * math.ceil(n / cfg.batch_size)
    optimiser = torch.optim.AdamW(trained, lr=cfg.lr, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda step: max(0.0, (steps - step) / steps))
    histories: list[list[Epoch]] = [[] for _ in runs]
    start = time.perf_counter()
    for epoch in range(1, cfg.epochs + 1):
        loss_sum = torch.zeros(R, device=device)
        correct = torch.zeros(R, device=device)
        attention_sum = torch.zeros(R, device=device)
        orders = torch.stack([torch.randperm(n, generator=run.shuffle) for run in runs]).to(device)
        batches = orders.split(cfg.batch_size, dim=1)
        for rows in batches:
            logits, attention = _forward(block, heads, params, train_hidden, train_mask, sets, rows)
            target = labels.gather(1, rows)
            loss = F.cross_entropy(logits.flatten(0, 1), target.flatten(), reduction="none").view(R, -1).mean(1)
            optimiser.zero_grad(set_to_none=True)
            loss.sum().backward()  # each run's gradient is its own loss's
            _clip_per_run(trained, cfg.clip)
            optimiser.step()
            schedule.step()
            loss_sum += loss.detach()
            correct += (logits.detach().argmax(-1) == target).sum(1)
            attention_sum += attention.detach().amax(-1).mean(-1).sum(1)
        for r in range(R):
            histories[r].append(
                Epoch(epoch, loss_sum[r].item() / len(batches), correct[r].item() / n, attention_sum[r].item() / n)
            )
        if epoch % cfg.log_every == 0 or epoch == cfg.epochs:
            losses = " ".join(f"{v:.4f}" for v in (loss_sum / len(batches)).tolist())
            log.info("%s: epoch %d/%d loss per run %s elapsed %.1fs", name, epoch, cfg.epochs, losses,
                     time.perf_counter() - start)  # fmt: skip
    for p in trained:
        p.requires_grad_(False)
    train_eval = _evaluate(block, heads, params, train_hidden, train_mask, sets, labels)
    test_hidden, test_mask, y_test = test_set
    test_eval = _evaluate(block, heads, params, test_hidden[None], test_mask[None] if test_mask is not None else None,
                          torch.zeros_like(sets), y_test.to(device).expand(R, -1))  # fmt: skip
    return [RunResult(histories[r], *train_eval[r], *test_eval[r]) for r in range(R)]


@torch.no_grad()
def _evaluate(block, heads, params, hidden, mask, sets, labels, batch_size: int = 256) -> list[tuple[float, float]]:
    """Per run: (mean cross-entropy, accuracy) over all rows of its set."""
    R, n = labels.shape
    loss = torch.zeros(R, dtype=torch.float64, device=labels.device)  # as the one-run path's Python floats
    correct = torch.zeros(R, device=labels.device)
    for batch in torch.arange(n, device=labels.device).split(batch_size):
        rows = batch.expand(R, -1)
        logits, _ = _forward(block, heads, params, hidden, mask, sets, rows)
        target = labels[:, batch]
        loss += F.cross_entropy(logits.flatten(0, 1), target.flatten(), reduction="none").view(R, -1).sum(1)
        correct += (logits.argmax(-1) == target).sum(1)
    return [(loss[r].item() / n, correct[r].item() / n) for r in range(R)]
