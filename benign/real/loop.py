"""The real-data training loop shared by both phases (docs/real_protocol.md#optimiser).

AdamW (lr 5e-5, weight decay 0), learning rate decaying linearly to 0 over all steps with no
warm-up, gradient norm clipped to 1.0, mini-batches of 16 drawn by a seeded shuffle each
epoch, cross-entropy loss. The loop knows nothing about models: ``forward(batch_rows)``
returns the logits and, in phase 2, the attention from position 0 (B, H, T).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from benign.real.settings import PROTOCOL

log = logging.getLogger("benign.real")

Forward = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor | None]]


@dataclass(frozen=True)
class TrainConfig:
    epochs: int
    lr: float = PROTOCOL["lr"]
    batch_size: int = PROTOCOL["batch_size"]
    clip: float = PROTOCOL["clip"]
    log_every: int = PROTOCOL["log_every"]  # epochs between progress lines


@dataclass
class Epoch:
    epoch: int  # 1-based
    loss: float  # mean over the epoch's batches
    acc: float  # of the training forward passes, against the labels trained on
    max_attention: float | None  # mean over samples and heads of the max attention from position 0


def train(
    params: list[torch.nn.Parameter],
    forward: Forward,
    labels: torch.Tensor,
    cfg: TrainConfig,
    generator: torch.Generator,
    name: str,
    after_epoch: Callable[[int], None] | None = None,
) -> list[Epoch]:
    """Train ``params`` on rows 0..len(labels)-1; log a progress line every ``cfg.log_every`` epochs;
    call ``after_epoch(epoch)`` at the end of every epoch (phase 2 records its test metrics there)."""
    n = len(labels)
    steps = cfg.epochs * math.ceil(n / cfg.batch_size)
    optimiser = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda step: max(0.0, (steps - step) / steps))
    history = []
    start = time.perf_counter()
    for epoch in range(1, cfg.epochs + 1):
        loss_sum = torch.zeros((), device=labels.device)
        correct = torch.zeros((), device=labels.device)
        attention_sum = torch.zeros((), device=labels.device)
        batches = torch.randperm(n, generator=generator).to(labels.device).split(cfg.batch_size)
        for rows in batches:
            logits, attention = forward(rows)
            loss = F.cross_entropy(logits, labels[rows])
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, cfg.clip)
            optimiser.step()
            schedule.step()
            loss_sum += loss.detach()
            correct += (logits.detach().argmax(-1) == labels[rows]).sum()
            if attention is not None:
                attention_sum += attention.detach().amax(-1).mean(-1).sum()
        record = Epoch(
            epoch=epoch,
            loss=loss_sum.item() / len(batches),
            acc=correct.item() / n,
            max_attention=attention_sum.item() / n if attention is not None else None,
        )
        history.append(record)
        if after_epoch is not None:
            after_epoch(epoch)
        if epoch % cfg.log_every == 0 or epoch == cfg.epochs:
            log.info(
                "%s epoch %d/%d loss %.4f acc %.4f elapsed %.1fs",
                name,
                epoch,
                cfg.epochs,
                record.loss,
                record.acc,
                time.perf_counter() - start,
            )
    return history


@torch.no_grad()
def evaluate(forward: Forward, labels: torch.Tensor, batch_size: int = 256) -> tuple[float, float]:
    """(mean cross-entropy, accuracy) over rows 0..len(labels)-1."""
    rows = torch.arange(len(labels), device=labels.device)
    loss, correct = 0.0, 0
    for batch in rows.split(batch_size):
        logits, _ = forward(batch)
        loss += F.cross_entropy(logits, labels[batch], reduction="sum").item()
        correct += (logits.argmax(-1) == labels[batch]).sum().item()
    return loss / len(labels), correct / len(labels)
