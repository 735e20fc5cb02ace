"""Phase 1 for every seed of a data set as one program, and the file that keeps its heads
(docs/real_protocol.md#phase-1-every-seed-at-once).

Each seed trains its own head (BERT: pooler + classifier; images: classifier) on its own clean
pretraining rows, with its own initialisation ("real_head_init") and batch order
("real_pretrain_shuffle"), exactly as the one-run path ``reference.pretrain_head`` does; the
seeds' parameters are stacked along a leading run axis so one optimiser step serves them all.
Every n fine-tunes from the same head of a seed, so phase 1 runs once per data set, not once
per phase-2 job.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors import safe_open
from safetensors.torch import save_file

from benign.core.io import atomic_path
from benign.core.rng import generator
from benign.real.features import FeatureCache
from benign.real.final_layer import Head, make_head
from benign.real.loop import TrainConfig

log = logging.getLogger("benign.real")


@dataclass
class PretrainedHeads:
    """Per seed: the head after phase 1 and its clean test accuracy (the tables' baseline)."""

    heads: dict[int, Head]
    baseline_acc: dict[int, float]
    meta: dict


def clip_per_run(params: Sequence[torch.Tensor], max_norm: float) -> None:
    """torch.nn.utils.clip_grad_norm_ applied to each run's gradients on their own (leading axis: runs)."""
    grads = [p.grad for p in params]
    norms = torch.sqrt(sum(torch.linalg.vector_norm(g.flatten(1), dim=1) ** 2 for g in grads))
    coef = torch.clamp(max_norm / (norms + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef.view(-1, *([1] * (g.dim() - 1))))


def stacked_logits(params: dict[str, torch.Tensor], features: torch.Tensor) -> torch.Tensor:
    """Heads stacked along the run axis: features (R, B, d) -> logits (R, B, C)."""
    if "pooler.weight" in params:
        features = torch.tanh(torch.baddbmm(params["pooler.bias"][:, None], features, params["pooler.weight"].mT))
    return torch.baddbmm(params["classifier.bias"][:, None], features, params["classifier.weight"].mT)


def pretrain_heads(
    cache: FeatureCache, rows: Sequence[torch.Tensor], seeds: Sequence[int], cfg: TrainConfig, device
) -> PretrainedHeads:
    """Phase 1 for every seed at once: ``rows[i]`` are seed ``seeds[i]``'s clean pretraining rows
    (all of one size)."""
    start = time.perf_counter()
    num_classes, d = len(cache.meta["classes"]), cache.block_config.hidden_size
    init = [
        make_head(d, num_classes, cache.pooler_state, cache.meta["initializer_range"], generator(s, "real_head_init"))
        for s in seeds
    ]
    pooled, labels = cache.train_pooled.to(device), cache.y_train.to(device)
    params = {
        k: torch.stack([h.state_dict()[k] for h in init]).to(device, pooled.dtype).requires_grad_(True)
        for k in init[0].state_dict()
    }
    rows = torch.stack(list(rows)).to(device)  # (R, P)
    R, P = rows.shape
    shuffles = [generator(s, "real_pretrain_shuffle") for s in seeds]
    steps = cfg.epochs * math.ceil(P / cfg.batch_size)
    optimiser = torch.optim.AdamW(params.values(), lr=cfg.lr, weight_decay=0.0, fused=True)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda step: max(0.0, (steps - step) / steps))
    for epoch in range(1, cfg.epochs + 1):
        order = torch.stack([torch.randperm(P, generator=g) for g in shuffles]).to(device)
        picked_all = rows.gather(1, order)
        loss_sum = torch.zeros(R, dtype=torch.float64, device=device)
        for picked in picked_all.split(cfg.batch_size, dim=1):
            logits = stacked_logits(params, pooled[picked])
            loss = F.cross_entropy(logits.flatten(0, 1), labels[picked].flatten(), reduction="none").view(R, -1).mean(1)
            optimiser.zero_grad(set_to_none=True)
            loss.sum().backward()
            clip_per_run(list(params.values()), cfg.clip)
            optimiser.step()
            schedule.step()
            loss_sum += loss.detach()
        if epoch % cfg.log_every == 0 or epoch == cfg.epochs:
            shown = " ".join(f"{v:.4f}" for v in (loss_sum / math.ceil(P / cfg.batch_size)).tolist())
            log.info("phase 1: epoch %d/%d loss per seed %s elapsed %.1fs", epoch, cfg.epochs, shown,
                     time.perf_counter() - start)  # fmt: skip
    heads, baseline = {}, {}
    with torch.no_grad():
        test_logits = stacked_logits(params, cache.test_pooled.to(device).expand(R, -1, -1))
        correct = (test_logits.argmax(-1) == cache.y_test.to(device)).sum(1).tolist()
        for i, seed in enumerate(seeds):
            head = Head(d, num_classes, cache.pooler_state is not None).to(device, pooled.dtype)
            head.load_state_dict({k: v[i].detach() for k, v in params.items()})
            heads[seed] = head.requires_grad_(False)
            baseline[seed] = correct[i] / len(cache.y_test)
    meta = dict(dataset=cache.meta["dataset"], pretrain_size=P, epochs=cfg.epochs, seeds=list(seeds),
                wall_time_s=time.perf_counter() - start)  # fmt: skip
    return PretrainedHeads(heads, baseline, meta)


def save_heads(result: PretrainedHeads, path: str | Path) -> None:
    tensors = {
        f"seed{s}.{k}": v.detach().cpu().contiguous()
        for s, h in result.heads.items()
        for k, v in h.state_dict().items()
    }
    meta = dict(result.meta, baseline_acc={str(s): a for s, a in result.baseline_acc.items()})
    with atomic_path(path) as tmp:
        save_file(tensors, str(tmp), metadata={"meta": json.dumps(meta)})


def load_heads(path: str | Path, device="cpu") -> PretrainedHeads:
    with safe_open(str(path), framework="pt") as f:
        meta = json.loads(f.metadata()["meta"])
        tensors = {k: f.get_tensor(k) for k in f.keys()}
    heads = {}
    for seed in meta["seeds"]:
        state = {k.split(".", 1)[1]: v for k, v in tensors.items() if k.startswith(f"seed{seed}.")}
        head = Head(state["classifier.weight"].shape[1], state["classifier.weight"].shape[0], "pooler.weight" in state)
        head.load_state_dict(state)
        heads[seed] = head.to(device).requires_grad_(False)
    baseline = {int(s): a for s, a in meta.pop("baseline_acc").items()}
    return PretrainedHeads(heads, baseline, meta)
