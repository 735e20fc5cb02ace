"""The real-data protocol (docs/real_protocol.md): clean pretraining of the head, then noisy fine-tuning of
the final layer's query and key, on cached backbone features.

Per seed, a permutation of the training rows gives the clean pretraining set (its first
``pretrain_size`` rows) and the fine-tuning set (the next n), so the pretraining set is
shared by every n and the fine-tuning sets are nested across n. Label noise is drawn once
per training row and seed (``label_noise.draw_nested_noise``), so it is nested across eta
and across n. ``pretrain`` trains the heads of every seed of a data set at once
(``benign.real.heads``); one call of ``run_cell`` then covers every eta of one (data set,
backbone, n, seed) from its seed's head, its phase-2 runs trained as one program
(``benign.real.batched``).

Random streams (all derived from the seed): "real_split", "real_label_noise",
"real_head_init", "real_pretrain_shuffle", "real_qk_init", "real_finetune_shuffle". The
query/key initialisation and the fine-tuning shuffle restart for every eta, so runs that
differ only in eta share them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import torch

from benign.core.device import peak_memory_mb, pick_device
from benign.core.rng import generator
from benign.real.batched import Run, TrainSet, finetune_runs
from benign.real.features import FeatureCache, load_features
from benign.real.final_layer import drop_padding
from benign.real.heads import PretrainedHeads, pretrain_heads
from benign.real.label_noise import draw_nested_noise
from benign.real.loop import TrainConfig
from benign.real.records import record_epochs, summarise
from benign.real.reinit_cost import attention_share, uniform_accuracy
from benign.real.schema import REAL_ATTENTION, REAL_CURVES, REAL_RUNS

log = logging.getLogger("benign.real")


def split_indices(num_train: int, pretrain_size: int, n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(pretraining rows, fine-tuning rows): ``pretrain_size + n`` distinct training rows drawn per seed."""
    if pretrain_size + n > num_train:
        raise ValueError(f"pretrain_size {pretrain_size} + n {n} exceeds the {num_train} training rows")
    perm = torch.randperm(num_train, generator=generator(seed, "real_split"))
    return perm[:pretrain_size], perm[pretrain_size : pretrain_size + n]


def finetune_pool(num_train: int, pretrain_size: int, max_n: int, seeds: Sequence[int]) -> list[int]:
    """Every training row some (seed, n <= max_n) fine-tunes on: the rows whose final-layer
    inputs ``compute_features`` must keep (its ``train_rows``)."""
    rows = set()
    for seed in seeds:
        rows.update(split_indices(num_train, pretrain_size, max_n, seed)[1].tolist())
    return sorted(rows)


def run_id(dataset: str, backbone: str, n: int, eta: float, seed: int) -> str:
    return f"{dataset}__{backbone}__n{n}__eta{eta:.3f}__seed{seed}"


def on_device(*tensors: torch.Tensor | None, device: torch.device) -> list[torch.Tensor | None]:
    return [t.to(device) if t is not None else None for t in tensors]


def pretrain(
    features_path: str | Path | Sequence[str | Path],
    dataset_entry: dict,
    seeds: Sequence[int],
    pretrain_epochs: int = 300,
    lr: float = 5e-5,
    batch_size: int = 16,
    clip: float = 1.0,
    log_every: int = 100,
    device: str | torch.device | None = None,
) -> PretrainedHeads:
    """Phase 1 of every seed of one data set, as one program (``heads.pretrain_heads``)."""
    device = pick_device() if device is None else torch.device(device)
    cache = checked_cache(features_path, dataset_entry)
    size = int(dataset_entry["pretrain_size"])
    rows = [split_indices(len(cache.y_train), size, 0, seed)[0] for seed in seeds]
    log.info(
        "%s: phase 1 of seeds %s on %d clean rows each, %d epochs",
        dataset_entry["name"],
        list(seeds),
        size,
        pretrain_epochs,
    )
    cfg = TrainConfig(epochs=pretrain_epochs, lr=lr, batch_size=batch_size, clip=clip, log_every=log_every)
    result = pretrain_heads(cache, rows, seeds, cfg, device)
    for seed, acc in result.baseline_acc.items():
        log.info("%s seed=%d: baseline test accuracy %.4f", dataset_entry["name"], seed, acc)
    return result


def checked_cache(features_path: str | Path | Sequence[str | Path], dataset_entry: dict) -> FeatureCache:
    cache = load_features(features_path)
    if cache.meta["dataset"] != dataset_entry["name"]:
        raise ValueError(f"{features_path} holds features of {cache.meta['dataset']!r}, not {dataset_entry['name']!r}")
    return cache


def run_cell(
    features_path: str | Path | Sequence[str | Path],
    heads: PretrainedHeads,
    dataset_entry: dict,
    n: int,
    etas: Sequence[float],
    seed: int,
    finetune_epochs: int = 2000,
    lr: float = 5e-5,
    batch_size: int = 16,
    clip: float = 1.0,
    log_every: int = 100,
    backbone_name: str | None = None,
    device: str | torch.device | None = None,
    code_version: str = "",
    checkpoint: str | Path | None = None,
    checkpoint_every: int = 0,
    records: int | list[int] = 30,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Phase 2 for one (data set, backbone, n, seed) and every eta, from the seed's phase-1 head.
    With ``checkpoint``, phase 2 saves its state every ``checkpoint_every`` epochs and on a stop
    signal, and a later call resumes from it (``batched.finetune_runs``).

    ``records``: the epochs at which each run records its test metrics (``records.record_epochs``).

    Returns (runs, attention, curves) frames matching ``schema.REAL_RUNS``, ``REAL_ATTENTION`` and ``REAL_CURVES``.
    ``backbone_name`` goes into run ids (default: the backbone spec's name); the ``backbone``
    column holds what was actually loaded. A run's wall time is an equal share of the batched
    phase 2 (phase 1's time is in the heads file).
    """
    device = pick_device() if device is None else torch.device(device)
    cache = checked_cache(features_path, dataset_entry)
    name = dataset_entry["name"]
    if heads.meta["dataset"] != name or seed not in heads.heads:
        raise ValueError(
            f"the phase-1 heads are of {heads.meta['dataset']!r} seeds {heads.meta['seeds']}, not {name!r} seed {seed}"
        )
    if heads.meta["pretrain_size"] != int(dataset_entry["pretrain_size"]):
        raise ValueError(
            f"the phase-1 heads pretrained on {heads.meta['pretrain_size']} rows, the entry says {dataset_entry['pretrain_size']}"
        )
    backbone_name = backbone_name or cache.meta["backbone_spec"].get("name", cache.meta["backbone"])
    num_classes = len(cache.meta["classes"])
    pretrain_size = heads.meta["pretrain_size"]
    _, finetune_rows = split_indices(len(cache.y_train), pretrain_size, n, seed)
    phase_two_cfg = TrainConfig(epochs=finetune_epochs, lr=lr, batch_size=batch_size, clip=clip, log_every=log_every)
    head = heads.heads[seed].to(device)
    baseline_acc = heads.baseline_acc[seed]

    record_at = record_epochs(finetune_epochs, records)
    block = cache.block().to(device).requires_grad_(False)
    hidden, mask = on_device(*drop_padding(*cache.train_hidden(finetune_rows)), device=device)
    test_chunks = TestChunks(cache, device)
    uniform_acc, share = uniform_accuracy(block, head, test_chunks), attention_share(block, test_chunks)
    noise = draw_nested_noise(cache.y_train, num_classes, generator(seed, "real_label_noise"))
    clean = cache.y_train[finetune_rows]
    # Every eta's phase 2 as one program (benign.real.batched): the runs share the seed's rows,
    # head, query/key initialisation and batch order, and differ in their labels.
    labels = [noise.labels(eta)[finetune_rows] for eta in etas]
    batch = [Run(0, y.to(device), head, generator(seed, "real_qk_init"), y != clean) for y in labels]
    train_set = TrainSet(hidden, mask, generator(seed, "real_finetune_shuffle"))
    log.info("%s n=%d seed=%d: phase 2 of %d noise rates, %d epochs", name, n, seed, len(batch), finetune_epochs)
    start = time.perf_counter()
    identity = (
        f"{name} {backbone_name} n={n} seed={seed} etas={[float(e) for e in etas]} {phase_two_cfg} records={record_at}"
    )
    results = finetune_runs(
        block, batch, [train_set], test_chunks, phase_two_cfg, f"phase 2, {len(batch)} noise rates",
        checkpoint=Path(checkpoint) if checkpoint is not None else None, checkpoint_every=checkpoint_every,
        identity=identity, record_at=record_at,
    )  # fmt: skip
    wall_two = (time.perf_counter() - start) / len(batch)
    runs, attention, curves = [], [], []
    for eta, two, run in zip(etas, results, batch):
        rid = run_id(name, backbone_name, n, eta, seed)
        log.info(
            "%s n=%d eta=%.3f seed=%d: train loss %.4f, test acc %.4f", name, n, eta, seed, two.train_loss, two.test_acc
        )
        runs.append(
            dict(
                run_id=rid,
                dataset=name,
                dataset_label=dataset_entry.get("label", name),
                paper_dataset=dataset_entry.get("paper_dataset"),
                backbone=cache.meta["backbone"],
                n=n,
                eta=float(eta),
                seed=seed,
                num_classes=num_classes,
                pretrain_size=pretrain_size,
                pretrain_epochs=heads.meta["epochs"],
                finetune_epochs=finetune_epochs,
                baseline_acc=baseline_acc,
                reinit_test_acc=two.records[0].test_acc,
                uniform_test_acc=uniform_acc,
                attention_share=share,
                n_noisy=int(run.noisy.sum()),
                **summarise(two.records, int(run.noisy.sum())),
                train_loss_last_epoch=two.history[-1].loss,
                train_loss=two.train_loss,
                train_acc=two.train_acc,
                test_loss=two.test_loss,
                test_acc=two.test_acc,
                status="ok",
                wall_time_s=wall_two,
                device=str(device),
                code_version=code_version,
            )
        )
        attention.extend(
            dict(
                run_id=rid,
                dataset=name,
                n=n,
                eta=float(eta),
                seed=seed,
                epoch=e.epoch,
                train_loss=e.loss,
                max_attention=e.max_attention,
            )
            for e in two.history
        )
        curves.extend(
            dict(run_id=rid, dataset=name, n=n, eta=float(eta), seed=seed, epoch=r.epoch, test_loss=r.test_loss,
                 test_acc=r.test_acc, train_acc_clean=r.train_acc_clean, train_acc_noisy=r.train_acc_noisy)
            for r in two.records
        )  # fmt: skip
    rss_mb, cuda_mb = peak_memory_mb(device)
    for run in runs:
        run.update(peak_rss_mb=rss_mb, peak_cuda_mb=cuda_mb)
    return (
        pd.DataFrame(runs, columns=REAL_RUNS.names),
        pd.DataFrame(attention, columns=REAL_ATTENTION.names),
        pd.DataFrame(curves, columns=REAL_CURVES.names),
    )


class TestChunks:
    """The test split as phase 2 reads it, chunk by chunk from disk (``FeatureCache.test_chunks``,
    padding dropped), on ``device``; iterable again for every recorded epoch."""

    def __init__(self, cache: FeatureCache, device: torch.device):
        self.cache, self.device = cache, device

    def __iter__(self):
        for hidden, mask, y in self.cache.test_chunks():
            yield (*on_device(*drop_padding(hidden, mask), device=self.device), y.to(self.device))
