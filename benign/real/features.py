"""The feature cache: the frozen backbone run once per (backbone, data set, preprocessing).

Both training phases touch only the head and the final layer's query/key, so one pass of
the backbone stores everything they need, in one safetensors file:

- ``train_pooled`` / ``test_pooled`` (N, d): the backbone's output at position 0 (after the
  final norm where the backbone has one): phase 1's input, for every row.
- ``train_hidden`` / ``test_hidden`` (N, T, d): the hidden states entering the final layer,
  for the rows ``train_rows`` of the training split (all rows, or the fine-tuning pool the
  workflow asks for, see ``protocol.finetune_pool``) and for the whole test split.
- ``train_mask`` / ``test_mask`` (N, T): True for real tokens (text only).
- ``y_train`` / ``y_test``: class indices; ``block.*``: the final layer's weights
  (``final_layer.FinalBlock``); ``pooler.*``: BERT's pooler, which the head starts from.
- metadata ``meta``: JSON with the block config, backbone identity and spec, data set name
  and checksum, so training needs neither the backbone source nor the hub.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors import safe_open
from safetensors.torch import save_file

from benign.device import pick_device
from benign.io import atomic_path
from benign.real.backbones import last_encoder_layer, load_backbone
from benign.real.datasets import CHECKSUMS, load_dataset
from benign.real.final_layer import BlockConfig, FinalBlock, backbone_pooler

log = logging.getLogger("benign.real")


@torch.no_grad()
def run_backbone(backbone, x: np.ndarray, hidden_rows: np.ndarray, batch_size: int, device: torch.device):
    """(pooled (N, d), hidden (len(hidden_rows), T, d), mask or None) for raw inputs ``x``."""
    model = backbone.model.to(device)
    captured = {}

    def grab(module, args, kwargs):
        captured["hidden"] = args[0] if args else kwargs["hidden_states"]

    hook = last_encoder_layer(model).register_forward_pre_hook(grab, with_kwargs=True)
    want = np.zeros(len(x), dtype=bool)
    want[hidden_rows] = True
    slot = np.cumsum(want) - 1  # position of each wanted row in the hidden array
    pooled, hidden, mask = None, None, None
    start = time.perf_counter()
    try:
        for lo in range(0, len(x), batch_size):
            rows = np.arange(lo, min(lo + batch_size, len(x)))
            inputs = {k: v.to(device) for k, v in backbone.inputs(x[rows]).items()}
            out = model(**inputs).last_hidden_state[:, 0].float().cpu()
            h = captured["hidden"].float().cpu()
            if pooled is None:
                pooled = torch.empty(len(x), out.shape[-1])
                hidden = torch.empty(int(want.sum()), *h.shape[1:])
                mask = (
                    torch.empty(int(want.sum()), h.shape[1], dtype=torch.bool) if "attention_mask" in inputs else None
                )
            pooled[rows] = out
            keep = want[rows]
            hidden[slot[rows[keep]]] = h[torch.from_numpy(keep)]
            if mask is not None:
                mask[slot[rows[keep]]] = inputs["attention_mask"].bool().cpu()[torch.from_numpy(keep)]
            if (lo // batch_size) % 20 == 0:
                log.info("features %d/%d rows, %.1fs", rows[-1] + 1, len(x), time.perf_counter() - start)
    finally:
        hook.remove()
    return pooled, hidden, mask


def compute_features(
    backbone_spec: dict,
    dataset_dir: str | Path,
    out_path: str | Path,
    train_rows: Sequence[int] | None = None,
    batch_size: int = 64,
    device: str | torch.device | None = None,
) -> Path:
    """Run the frozen backbone over a fetched data set and write the feature cache.

    ``train_rows``: training rows whose final-layer inputs are kept (None: all); phase 2 can
    only fine-tune on these. Pooled features are kept for every row.
    """
    device = pick_device() if device is None else torch.device(device)
    data = load_dataset(dataset_dir)
    backbone = load_backbone(backbone_spec)
    if backbone.modality != data.modality:
        raise ValueError(
            f"backbone {backbone.identity} reads {backbone.modality}, data set {data.name} is {data.modality}"
        )
    rows = np.arange(len(data.y_train)) if train_rows is None else np.unique(np.asarray(train_rows, dtype=np.int64))
    if rows.size and (rows.min() < 0 or rows.max() >= len(data.y_train)):
        raise ValueError(f"train_rows must lie in 0..{len(data.y_train) - 1}")
    block = FinalBlock.from_backbone(backbone.model)
    tensors = {f"block.{k}": v.detach().float().contiguous() for k, v in block.state_dict().items()}
    pooler = backbone_pooler(backbone.model)
    if pooler is not None:
        tensors.update({f"pooler.{k}": v.float().contiguous() for k, v in pooler.items()})
    for split, x, y, keep in (
        ("train", data.x_train, data.y_train, rows),
        ("test", data.x_test, data.y_test, np.arange(len(data.y_test))),
    ):
        pooled, hidden, mask = run_backbone(backbone, x, keep, batch_size, device)
        tensors[f"{split}_pooled"] = pooled
        tensors[f"{split}_hidden"] = hidden
        if mask is not None:
            tensors[f"{split}_mask"] = mask
        tensors[f"y_{split}"] = torch.from_numpy(y.astype(np.int64))
    tensors["train_rows"] = torch.from_numpy(rows)
    meta = {
        "block": block.config_dict(),
        "backbone": backbone.identity,
        "backbone_spec": backbone_spec,
        "dataset": data.name,
        "classes": data.classes,
        "dataset_sha256": (Path(dataset_dir) / CHECKSUMS).read_text(),
        "initializer_range": backbone.model.config.initializer_range,
    }
    with atomic_path(out_path) as tmp:
        save_file(tensors, str(tmp), metadata={"meta": json.dumps(meta)})
    return Path(out_path)


@dataclass
class FeatureCache:
    """A feature cache opened for training; final-layer inputs of training rows are read on demand."""

    path: Path
    meta: dict
    train_pooled: torch.Tensor
    test_pooled: torch.Tensor
    y_train: torch.Tensor
    y_test: torch.Tensor
    train_rows: torch.Tensor
    block_state: dict[str, torch.Tensor]
    pooler_state: dict[str, torch.Tensor] | None

    @property
    def block_config(self) -> BlockConfig:
        return BlockConfig(**self.meta["block"])

    def block(self) -> FinalBlock:
        block = FinalBlock(self.block_config)
        block.load_state_dict(self.block_state)
        return block

    def train_hidden(self, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Final-layer inputs (and masks) of training rows, reading only those rows from disk."""
        position = {int(r): i for i, r in enumerate(self.train_rows)}
        missing = [int(r) for r in rows if int(r) not in position]
        if missing:
            raise ValueError(
                f"{self.path} holds no final-layer inputs for training rows {missing[:5]}...: recompute the "
                "features with train_rows covering protocol.finetune_pool(...) for these seeds and n"
            )
        slots = [position[int(r)] for r in rows]
        with safe_open(str(self.path), "pt") as f:
            keys = [k for k in ("train_hidden", "train_mask") if k in f.keys()]
            parts = {k: torch.cat([f.get_slice(k)[s : s + 1] for s in slots]) for k in keys}
        return parts["train_hidden"], parts.get("train_mask")

    def test_hidden(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        with safe_open(str(self.path), "pt") as f:
            mask = f.get_tensor("test_mask") if "test_mask" in f.keys() else None
            return f.get_tensor("test_hidden"), mask


def load_features(path: str | Path) -> FeatureCache:
    path = Path(path)
    with safe_open(str(path), "pt") as f:
        meta = json.loads(f.metadata()["meta"])
        keys = set(f.keys())
        get = f.get_tensor
        block = {k.removeprefix("block."): get(k) for k in keys if k.startswith("block.")}
        pooler = {k.removeprefix("pooler."): get(k) for k in keys if k.startswith("pooler.")} or None
        return FeatureCache(
            path=path,
            meta=meta,
            train_pooled=get("train_pooled"),
            test_pooled=get("test_pooled"),
            y_train=get("y_train"),
            y_test=get("y_test"),
            train_rows=get("train_rows"),
            block_state=block,
            pooler_state=pooler,
        )
