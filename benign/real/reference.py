"""The one-run real-data path: phase 1 of one seed and phase 2 of one run, written plainly.

The workflow trains every seed's head at once (``benign.real.heads``) and every eta of a cell as
one program (``benign.real.batched``); this module is what those batched programs are tested
against, float64 to 1e-9 (tests/real/), and what the phase-2 benchmark times as its reference.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from benign.core.rng import generator
from benign.real.backbones import reinit_linear
from benign.real.features import FeatureCache
from benign.real.final_layer import FinalBlock, Head, make_head
from benign.real.loop import Epoch, Forward, TrainConfig, evaluate, train
from benign.real.records import Record, split_accuracy


@dataclass
class PhaseOne:
    head: Head
    baseline_acc: float  # test accuracy
    wall_time_s: float


@dataclass
class PhaseTwo:
    history: list[Epoch]
    train_loss: float  # evaluated after training, against the noisy labels
    train_acc: float
    test_loss: float
    test_acc: float
    wall_time_s: float
    records: list[Record]


def pretrain_head(
    cache: FeatureCache, rows: torch.Tensor, num_classes: int, seed: int, cfg: TrainConfig, device
) -> PhaseOne:
    """Phase 1: train only the head (BERT: pooler + classifier) on the clean pretraining rows."""
    start = time.perf_counter()
    init = generator(seed, "real_head_init")
    head = make_head(
        cache.block_config.hidden_size, num_classes, cache.pooler_state, cache.meta["initializer_range"], init
    )
    features = cache.train_pooled[rows].to(device)
    head = head.to(device, features.dtype)
    labels = cache.y_train[rows].to(device)
    train(
        list(head.parameters()),
        lambda b: (head(features[b]), None),
        labels,
        cfg,
        generator(seed, "real_pretrain_shuffle"),
        "phase 1",
    )
    head.requires_grad_(False)
    test_features = cache.test_pooled.to(device)
    _, acc = evaluate(lambda b: (head(test_features[b]), None), cache.y_test.to(device))
    return PhaseOne(head=head, baseline_acc=acc, wall_time_s=time.perf_counter() - start)


def block_forward(block: FinalBlock, head: Head, hidden: torch.Tensor, mask: torch.Tensor | None) -> Forward:
    """Logits and attention of the rows of cached final-layer inputs."""

    def forward(rows: torch.Tensor):
        out, attention = block(hidden[rows], mask[rows] if mask is not None else None)
        return head(out), attention

    return forward


def finetune_query_key(
    block: FinalBlock,
    head: Head,
    train_set: tuple[torch.Tensor, torch.Tensor | None, torch.Tensor],
    test_set: tuple[torch.Tensor, torch.Tensor | None, torch.Tensor],
    seed: int,
    cfg: TrainConfig,
    name: str,
    record_at: list[int] = (),
    noisy: torch.Tensor | None = None,
) -> PhaseTwo:
    """Phase 2: re-initialise the final layer's query and key and train only them.

    ``train_set`` / ``test_set``: (final-layer inputs, mask or None, labels); the training
    labels are the noisy ones, ``noisy`` (n,) marks the rows whose label was flipped. At every
    epoch of ``record_at`` (0: before the first step) the run records its test metrics and its
    training accuracy on clean and on noisy rows (``benign.real.records``).
    """
    start = time.perf_counter()
    init = generator(seed, "real_qk_init")
    reinit_linear(block.query, init)
    reinit_linear(block.key, init)
    query_key = [*block.query.parameters(), *block.key.parameters()]
    for p in query_key:
        p.requires_grad_(True)
    hidden, mask, labels = train_set
    test_hidden, test_mask, y_test = test_set
    noisy = torch.zeros(len(labels), dtype=torch.bool) if noisy is None else noisy
    records = []

    def record(epoch: int) -> None:
        if epoch not in record_at:
            return
        with torch.no_grad():
            test_loss, test_acc = evaluate(block_forward(block, head, test_hidden, test_mask), y_test)
            out, _ = block(hidden, mask)
            correct = (head(out).argmax(-1) == labels).cpu().numpy()
        records.append(Record(epoch, test_loss, test_acc, *split_accuracy(correct, noisy.cpu().numpy())))

    record(0)
    forward = block_forward(block, head, hidden, mask)
    history = train(query_key, forward, labels, cfg, generator(seed, "real_finetune_shuffle"), name, record)
    for p in query_key:
        p.requires_grad_(False)
    train_loss, train_acc = evaluate(block_forward(block, head, hidden, mask), labels)
    test_loss, test_acc = evaluate(block_forward(block, head, test_hidden, test_mask), y_test)
    return PhaseTwo(history, train_loss, train_acc, test_loss, test_acc, time.perf_counter() - start, records)
