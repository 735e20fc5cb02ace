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
from benign.real.settings import PROTOCOL
from benign.real.sizes import held_test

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
    pretrain_epochs: int = PROTOCOL["pretrain_epochs"],
    lr: float = PROTOCOL["lr"],
    batch_size: int = PROTOCOL["batch_size"],
    clip: float = PROTOCOL["clip"],
    log_every: int = PROTOCOL["log_every"],
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
    finetune_epochs: int = PROTOCOL["finetune_epochs"],
    lr: float = PROTOCOL["lr"],
    batch_size: int = PROTOCOL["batch_size"],
    clip: float = PROTOCOL["clip"],
    log_every: int = PROTOCOL["log_every"],
    backbone_name: str | None = None,
    device: str | torch.device | None = None,
    code_version: str = "",
    checkpoint: str | Path | None = None,
    checkpoint_every: int = 0,
    records: int | list[int] = PROTOCOL["record_epochs"],
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Phase 2 for one (data set, backbone, n, seed) and every eta, from the seed's phase-1 head:
    (runs, attention, curves) frames of ``schema.REAL_RUNS``, ``REAL_ATTENTION``, ``REAL_CURVES``.
    With ``checkpoint``, it saves its state every ``checkpoint_every`` epochs and on a stop signal,
    and a later call resumes (``batched.finetune_runs``). ``records``: the epochs at which each run
    records its test metrics (``records.record_epochs``). ``backbone_name`` goes into run ids
    (default: the backbone spec's name), the ``backbone`` column is what was loaded. A run's wall
    time is an equal share of the batched phase 2 (phase 1's is in the heads file)."""
    device = pick_device() if device is None else torch.device(device)
    cache = checked_cache(features_path, dataset_entry)
    name = dataset_entry["name"]
    check_heads(heads, dataset_entry, seed)
    backbone_name = backbone_name or cache.meta["backbone_spec"].get("name", cache.meta["backbone"])
    _, finetune_rows = split_indices(len(cache.y_train), heads.meta["pretrain_size"], n, seed)
    phase_two_cfg = TrainConfig(epochs=finetune_epochs, lr=lr, batch_size=batch_size, clip=clip, log_every=log_every)
    head = heads.heads[seed].to(device)
    record_at = record_epochs(finetune_epochs, records)
    block, test_chunks, (uniform_acc, share) = frozen_layer(cache, head, device)
    batch, train_set = noisy_runs(cache, finetune_rows, etas, head, seed, device)
    log.info("%s n=%d seed=%d: phase 2 of %d noise rates, %d epochs", name, n, seed, len(batch), finetune_epochs)
    start = time.perf_counter()
    identity = (
        f"{name} {backbone_name} n={n} seed={seed} etas={[float(e) for e in etas]} {phase_two_cfg} records={record_at}"
    )
    results = finetune_runs(
        block, batch, [train_set], test_chunks, phase_two_cfg, f"phase 2, {len(batch)} noise rates",
        checkpoint=Path(checkpoint) if checkpoint is not None else None, checkpoint_every=checkpoint_every,
        identity=identity, record_at=record_at,
        hold_test=held_test(len(cache.y_test), cache.tokens, cache.block_config.hidden_size),
    )  # fmt: skip
    wall_two = (time.perf_counter() - start) / len(batch)
    cell = dict(
        dataset_label=dataset_entry.get("label", name), paper_dataset=dataset_entry.get("paper_dataset"),
        backbone=cache.meta["backbone"], num_classes=len(cache.meta["classes"]), pretrain_size=heads.meta["pretrain_size"],
        pretrain_epochs=heads.meta["epochs"], finetune_epochs=finetune_epochs, baseline_acc=heads.baseline_acc[seed],
        uniform_test_acc=uniform_acc, attention_share=share, wall_time_s=wall_two, device=str(device),
        code_version=code_version,
    )  # fmt: skip
    for eta, r in zip(etas, results):
        log.info(
            "%s n=%d eta=%.3f seed=%d: train loss %.4f, test acc %.4f", name, n, eta, seed, r.train_loss, r.test_acc
        )
    return phase_two_frames((name, backbone_name, n, seed), etas, results, batch, cell, peak_memory_mb(device))


def frozen_layer(cache: FeatureCache, head, device):
    """The final layer's frozen block on ``device``, the test split as phase 2 reads it, and what
    the seed's head scores before phase 2: (uniform-attention test accuracy, attention share)."""
    block = cache.block().to(device).requires_grad_(False)
    test_chunks = TestChunks(cache, device)
    return block, test_chunks, (uniform_accuracy(block, head, test_chunks), attention_share(block, test_chunks))


def noisy_runs(cache: FeatureCache, rows: torch.Tensor, etas: Sequence[float], head, seed: int, device):
    """Every eta's phase-2 run of a seed and its training set. The runs share the seed's rows,
    head, query/key initialisation and batch order, and differ in their labels (the nested label
    noise of the seed: the flips at a smaller eta are among those at a larger one)."""
    noise = draw_nested_noise(cache.y_train, len(cache.meta["classes"]), generator(seed, "real_label_noise"))
    clean = cache.y_train[rows]
    labels = [noise.labels(eta)[rows] for eta in etas]
    batch = [Run(0, y.to(device), head, generator(seed, "real_qk_init"), y != clean) for y in labels]
    hidden, mask = on_device(*drop_padding(*cache.train_hidden(rows)), device=device)
    return batch, TrainSet(hidden, mask, generator(seed, "real_finetune_shuffle"))


def check_heads(heads: PretrainedHeads, dataset_entry: dict, seed: int) -> None:
    """Refuse phase-1 heads of another data set, seed or pretraining size than the cell's."""
    name = dataset_entry["name"]
    if heads.meta["dataset"] != name or seed not in heads.heads:
        raise ValueError(
            f"the phase-1 heads are of {heads.meta['dataset']!r} seeds {heads.meta['seeds']}, not {name!r} seed {seed}"
        )
    if heads.meta["pretrain_size"] != int(dataset_entry["pretrain_size"]):
        raise ValueError(
            f"the phase-1 heads pretrained on {heads.meta['pretrain_size']} rows, the entry says {dataset_entry['pretrain_size']}"
        )


def phase_two_frames(cell_key: tuple, etas, results, batch, cell: dict, peaks: tuple):
    """(runs, attention, curves) frames of a cell's phase 2: one row per run with the cell's
    values ``cell`` and each run's results, its attention per epoch, its test metrics per
    recorded epoch. ``cell_key``: (data set, backbone name, n, seed); ``peaks``: the job's (RSS,
    CUDA) memory peaks in MB."""
    dataset, backbone, n, seed = cell_key
    runs, attention, curves = [], [], []
    for eta, two, run in zip(etas, results, batch):
        key = dict(run_id=run_id(dataset, backbone, n, eta, seed), dataset=dataset, n=n, eta=float(eta), seed=seed)
        n_noisy = int(run.noisy.sum())
        runs.append(
            dict(
                **key, **cell, reinit_test_acc=two.records[0].test_acc, n_noisy=n_noisy,
                **summarise(two.records, n_noisy), train_loss_last_epoch=two.history[-1].loss,
                train_loss=two.train_loss, train_acc=two.train_acc, test_loss=two.test_loss, test_acc=two.test_acc,
                status="ok", peak_rss_mb=peaks[0], peak_cuda_mb=peaks[1],
            )
        )  # fmt: skip
        attention.extend(
            dict(**key, epoch=e.epoch, train_loss=e.loss, max_attention=e.max_attention) for e in two.history
        )
        curves.extend(
            dict(**key, epoch=r.epoch, test_loss=r.test_loss, test_acc=r.test_acc, train_acc_clean=r.train_acc_clean,
                 train_acc_noisy=r.train_acc_noisy)
            for r in two.records
        )  # fmt: skip
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
