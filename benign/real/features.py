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

A cache may be written in parts (``part=(k, K)``, docs/cluster.md#the-sites-ceilings): part k
holds the k-th of K contiguous ranges of the training rows and of the test rows, cut at the
backbone's batches, so K jobs compute what one would. ``load_features`` opens one file or all
K parts as one cache; phase 2 reads the test set a chunk at a time (``test_chunks``), so no
job holds the whole test split's final-layer inputs.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from safetensors import safe_open
from safetensors.torch import save_file

from benign.core.device import pick_device
from benign.core.io import atomic_path
from benign.real.backbones import last_encoder_layer, load_backbone
from benign.real.datasets import CHECKSUMS, load_dataset
from benign.real.final_layer import BlockConfig, FinalBlock, backbone_pooler
from benign.real.sizes import BACKBONE_BATCH, TEST_CHUNK_ROWS, part_ranges

log = logging.getLogger("benign.real")
_SMALL = ("train_pooled", "test_pooled", "y_train", "y_test", "train_rows")  # read whole from every part


def trim_padding(inputs: dict[str, torch.Tensor]) -> tuple[int | None, dict[str, torch.Tensor]]:
    """(the padded length, the text batch cut after its last real token); (None, inputs) for
    images. Texts are padded on the right to ``max_length``, and padded positions get attention
    exactly 0, so the real tokens' states are the same without them (to float rounding), at a
    fraction of the cost: the movie reviews average about 25 real tokens of 128.
    ``run_backbone`` pads the states back with zeros, so the cache keeps its layout."""
    mask = inputs.get("attention_mask")
    if mask is None:
        return None, inputs
    if not bool(mask.any(dim=1).all()):  # a text with no token attends to every pad: kept as is
        return mask.shape[1], inputs
    if not bool((mask.cummin(dim=1).values == mask).all()):
        raise ValueError("text inputs must be padded on the right (every real token before the first pad)")
    length = int(mask.sum(1).max())
    return mask.shape[1], {k: v[:, :length] if v.shape == mask.shape else v for k, v in inputs.items()}


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
            full, inputs = trim_padding(inputs)
            out = model(**inputs).last_hidden_state[:, 0].float().cpu()
            h = captured["hidden"].float().cpu()
            if full is not None:  # text: the states and the mask padded back to max_length
                cut = full - h.shape[1]
                h, inputs["attention_mask"] = F.pad(h, (0, 0, 0, cut)), F.pad(inputs["attention_mask"], (0, cut))
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
    if pooled is None:  # an empty part: no rows of this split
        d = model.config.hidden_size
        pooled, hidden = torch.empty(0, d), torch.empty(0, 0, d)
        mask = torch.empty(0, 0, dtype=torch.bool) if backbone.modality == "text" else None
    return pooled, hidden, mask


def frozen_tensors(block: FinalBlock, backbone) -> dict[str, torch.Tensor]:
    """The final layer's and the pooler's weights (float32), as the feature cache stores them."""
    tensors = {f"block.{k}": v.detach().float().contiguous() for k, v in block.state_dict().items()}
    pooler = backbone_pooler(backbone.model)
    if pooler is not None:
        tensors.update({f"pooler.{k}": v.float().contiguous() for k, v in pooler.items()})
    return tensors


def compute_features(
    backbone_spec: dict,
    dataset_dir: str | Path,
    out_path: str | Path,
    train_rows: Sequence[int] | None = None,
    batch_size: int = BACKBONE_BATCH,
    device: str | torch.device | None = None,
    part: tuple[int, int] = (0, 1),
) -> Path:
    """Run the frozen backbone over a fetched data set and write the feature cache (or its
    part ``part = (k, K)``: the k-th of K ranges of the training and of the test rows).

    ``train_rows``: training rows whose final-layer inputs are kept (None: all); phase 2 can
    only fine-tune on these. Pooled features are kept for every row.
    """
    k, parts = part
    if not 0 <= k < parts:
        raise ValueError(f"part {k} of {parts}: must be 0 <= k < K")
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
    tensors = frozen_tensors(block, backbone)
    ranges = {}
    for split, x, y, keep in (
        ("train", data.x_train, data.y_train, rows),
        ("test", data.x_test, data.y_test, np.arange(len(data.y_test))),
    ):
        lo, hi = ranges[split] = part_ranges(len(y), parts, batch_size)[k]
        mine = keep[(keep >= lo) & (keep < hi)]
        pooled, hidden, mask = run_backbone(backbone, x[lo:hi], mine - lo, batch_size, device)
        tensors[f"{split}_pooled"] = pooled
        tensors[f"{split}_hidden"] = hidden
        if mask is not None:
            tensors[f"{split}_mask"] = mask
        tensors[f"y_{split}"] = torch.from_numpy(y[lo:hi].astype(np.int64))
        if split == "train":
            tensors["train_rows"] = torch.from_numpy(mine)
    meta = {
        "block": block.config_dict(),
        "backbone": backbone.identity,
        "backbone_spec": backbone_spec,
        "dataset": data.name,
        "classes": data.classes,
        "dataset_sha256": (Path(dataset_dir) / CHECKSUMS).read_text(),
        "initializer_range": backbone.model.config.initializer_range,
        "part": [k, parts],
        "rows": {"train": [*ranges["train"], len(data.y_train)], "test": [*ranges["test"], len(data.y_test)]},
    }
    with atomic_path(out_path) as tmp:
        save_file(tensors, str(tmp), metadata={"meta": json.dumps(meta)})
    return Path(out_path)


@dataclass
class FeatureCache:
    """A feature cache (one file, or all its parts) opened for training; final-layer inputs
    are read from disk on demand."""

    paths: list[Path]
    meta: dict
    train_pooled: torch.Tensor
    test_pooled: torch.Tensor
    y_train: torch.Tensor
    y_test: torch.Tensor
    train_rows: torch.Tensor  # the training rows with final-layer inputs, over all parts
    block_state: dict[str, torch.Tensor]
    pooler_state: dict[str, torch.Tensor] | None
    part_train_rows: list[torch.Tensor]  # per part, its training rows with final-layer inputs
    part_test_rows: list[tuple[int, int]]  # per part, its range of test rows

    @property
    def path(self) -> Path:
        return self.paths[0]

    @property
    def block_config(self) -> BlockConfig:
        return BlockConfig(**self.meta["block"])

    @property
    def tokens(self) -> int:
        """Positions per row of the final-layer inputs, padding included."""
        with safe_open(str(self.paths[0]), "pt") as f:
            return f.get_slice("test_hidden").get_shape()[1]

    def block(self) -> FinalBlock:
        block = FinalBlock(self.block_config)
        block.load_state_dict(self.block_state)
        return block

    def train_hidden(self, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Final-layer inputs (and masks) of training rows, reading only those rows from disk."""
        position = {int(r): (p, i) for p, part in enumerate(self.part_train_rows) for i, r in enumerate(part)}
        missing = [int(r) for r in rows if int(r) not in position]
        if missing:
            raise ValueError(
                f"{self.path} holds no final-layer inputs for training rows {missing[:5]}...: recompute the "
                "features with train_rows covering protocol.finetune_pool(...) for these seeds and n"
            )
        slots = [position[int(r)] for r in rows]
        parts: dict[str, list[torch.Tensor]] = {}
        for p, path in enumerate(self.paths):
            if not any(q == p for q, _ in slots):
                continue
            with safe_open(str(path), "pt") as f:
                for key in ("train_hidden", "train_mask"):
                    if key in f.keys():
                        view = f.get_slice(key)
                        parts.setdefault(key, [None] * len(slots))
                        for j, (q, i) in enumerate(slots):
                            if q == p:
                                parts[key][j] = view[i : i + 1]
        return torch.cat(parts["train_hidden"]), torch.cat(parts["train_mask"]) if "train_mask" in parts else None

    def test_chunks(
        self, rows: int = TEST_CHUNK_ROWS
    ) -> Iterator[tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]]:
        """The test split as (final-layer inputs, mask or None, labels) of ``rows`` consecutive
        rows at a time, read from disk: evaluating chunk by chunk holds one chunk in memory."""
        total = len(self.y_test)
        for lo in range(0, total, rows):
            hi = min(total, lo + rows)
            pieces = {"test_hidden": [], "test_mask": []}
            for path, (a, b) in zip(self.paths, self.part_test_rows):
                if b <= lo or a >= hi:
                    continue
                with safe_open(str(path), "pt") as f:
                    for key in pieces:
                        if key in f.keys():
                            pieces[key].append(f.get_slice(key)[max(lo, a) - a : min(hi, b) - a])
            mask = torch.cat(pieces["test_mask"]) if pieces["test_mask"] else None
            yield torch.cat(pieces["test_hidden"]), mask, self.y_test[lo:hi]

    def test_hidden(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The whole test split's final-layer inputs (and masks) at once."""
        hidden, masks = zip(*((h, m) for h, m, _ in self.test_chunks()))
        return torch.cat(hidden), torch.cat(masks) if masks[0] is not None else None


def load_features(paths: str | Path | Sequence[str | Path]) -> FeatureCache:
    """Open a feature cache: one file, or the K files of its parts (any order)."""
    paths = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]
    opened = []
    for path in paths:
        with safe_open(str(path), "pt") as f:
            meta = json.loads(f.metadata()["meta"])
            opened.append((meta.get("part", [0, 1])[0], path, meta, {k: f.get_tensor(k) for k in _SMALL}))
    opened.sort(key=lambda o: o[0])
    meta = opened[0][2]
    parts = meta.get("part", [0, 1])[1]
    same = ("dataset", "dataset_sha256", "backbone", "backbone_spec")
    if [o[0] for o in opened] != list(range(parts)) or any(
        o[2].get("part", [0, 1])[1] != parts or any(o[2][k] != meta[k] for k in same) for o in opened
    ):
        raise ValueError(
            f"feature cache parts {[str(p) for p in paths]}: expected parts 0..{parts - 1} of one data set "
            f"{meta['dataset']!r} and backbone {meta['backbone']!r}, found parts {[o[0] for o in opened]}"
        )
    with safe_open(str(opened[0][1]), "pt") as f:  # every part holds the same final layer
        keys = set(f.keys())
        block = {k.removeprefix("block."): f.get_tensor(k) for k in keys if k.startswith("block.")}
        pooler = {k.removeprefix("pooler."): f.get_tensor(k) for k in keys if k.startswith("pooler.")} or None
    cat = {k: torch.cat([o[3][k] for o in opened]) for k in _SMALL}
    test_ranges = [tuple(o[2]["rows"]["test"][:2]) if "rows" in o[2] else (0, len(o[3]["y_test"])) for o in opened]
    return FeatureCache(
        paths=[o[1] for o in opened],
        meta={k: v for k, v in meta.items() if k not in ("part", "rows")},
        train_pooled=cat["train_pooled"],
        test_pooled=cat["test_pooled"],
        y_train=cat["y_train"],
        y_test=cat["y_test"],
        train_rows=cat["train_rows"],
        block_state=block,
        pooler_state=pooler,
        part_train_rows=[o[3]["train_rows"] for o in opened],
        part_test_rows=test_ranges,
    )
