"""What a real-data job needs: memory (MB) and time (minutes) of the feature, pretraining and
fine-tuning jobs, from the backbone's shape and the rows they hold (docs/cluster.md#what-a-job-asks-for).
The synthetic jobs' needs, the cost model's constants and the site's ceilings are
benign.plan.resources'; this module is apart so that the synthetic half's planning holds
nothing of the real half. Torch-free: the workflow computes it at parse time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from benign.plan.resources import CPU_SECONDS, DEVICE_SPEED, Need, _kind
from benign.real import registry as real_registry
from benign.real.sizes import BACKBONE_BATCH, TEST_CHUNK_ROWS, part_ranges  # torch-free


@dataclass(frozen=True)
class BackboneShape:
    """What the real-data estimates need of a backbone: layers, width, attention heads, MLP width,
    and tokens per input (text: ``max_length``; images: patches + 1)."""

    layers: int
    hidden: int
    heads: int
    mlp: int
    tokens: int
    parameters: int


def backbone_shape(spec: dict, modality: str) -> BackboneShape:
    """From a backbone spec (``real.backbones.<name>``): its kind's shape
    (benign.real.registry.BackboneKind.shape), else the spec's ``layers``, ``hidden_size``,
    ``num_heads``, ``intermediate_size`` and ``patch_size`` (defaults: a base model, 12 x 768,
    12 heads, 3072, patches of 16)."""
    kind = real_registry.BACKBONE_KINDS.get(spec.get("kind"))
    layers, hidden, heads, mlp, patch = (kind.shape if kind is not None and kind.shape else
        (spec.get("layers", 12), spec.get("hidden_size", 768), spec.get("num_heads", 12),
         spec.get("intermediate_size", 3072), spec.get("patch_size", 16)))  # fmt: skip
    if modality == "text":
        tokens = int(spec.get("max_length", 128))
    else:
        tokens = (int(spec.get("image_size", 224)) // (patch or 16)) ** 2 + 1
    parameters = layers * (4 * hidden * hidden + 2 * hidden * mlp) + (30522 * hidden if modality == "text" else 0)
    return BackboneShape(layers, hidden, heads, mlp, tokens, parameters)


def _pooled_bytes(shape: BackboneShape, train_rows: int, test_rows: int) -> float:
    """Every row's pooled output and label: what opening a feature cache reads whole
    (benign/real/features.py; final-layer inputs are read on demand)."""
    return (train_rows + test_rows) * (4 * shape.hidden + 8)


def feature_part_rows(rows: int, parts: int) -> int:
    """The most rows one of ``parts`` parts of ``rows`` rows holds (``sizes.part_ranges``)."""
    return max(hi - lo for lo, hi in part_ranges(rows, parts)) if rows else 0


def features_need(shape: BackboneShape, train_rows: int, hidden_rows: int, test_rows: int, device: str = "cpu",
                  parts: int = 1) -> Need:  # fmt: skip
    """Rule features_real: the backbone over one of ``parts`` parts of the rows (all: 1 part).
    A part holds its rows' pooled outputs and the final-layer inputs of its share of the
    fine-tuning pool and of the test split."""
    device = _kind(device)
    d, T, L = shape.hidden, shape.tokens, shape.layers
    train, test = feature_part_rows(train_rows, parts), feature_part_rows(test_rows, parts)
    hidden = min(hidden_rows, train) + test
    activations = BACKBONE_BATCH * T * (4 * d + shape.mlp) * 4 * 2  # a batch through one layer, twice over
    seconds = CPU_SECONDS["features"]["a"] * (train + test) * L * T * (12 * d * d + 2 * T * d)
    memory = 4 * shape.parameters + activations + _pooled_bytes(shape, train, test) + hidden * T * (4 * d + 1)
    return Need.of(memory, seconds / DEVICE_SPEED[device]["features"])


def pretrain_need(shape: BackboneShape, classes: int, seeds: int, pretrain_size: int, epochs: int,
                  batch_size: int, train_rows: int, hidden_rows: int, test_rows: int, device: str = "cpu",
                  pooler: bool = False) -> Need:  # fmt: skip
    """Rule pretrain_real: every seed's head (BERT: ``pooler`` and classifier), trained together
    on cached pooled features."""
    device = _kind(device)
    d = shape.hidden
    head = d * classes + (d * d if pooler else 0)
    steps = epochs * math.ceil(pretrain_size / batch_size)
    k = CPU_SECONDS["real_phase1"]
    seconds = steps * (k["a"] * seeds * batch_size * head + k["c"])
    memory = 2 * _pooled_bytes(shape, train_rows, test_rows) + 4 * 4 * seeds * head  # the features, and on the device
    return Need.of(memory, seconds / DEVICE_SPEED[device]["real_phase1"])


def finetune_need(shape: BackboneShape, n: int, runs: int, epochs: int, batch_size: int, train_rows: int,
                  hidden_rows: int, test_rows: int, device: str = "cpu", records: int = 30) -> Need:  # fmt: skip
    """Rule train_real: phase 2 of a cell's runs as one program (benign/real/batched.py); the
    test split is evaluated ``TEST_CHUNK_ROWS`` rows at a time, at each of the ``records``
    recorded epochs (with the n training rows), a forward pass a third of a training step's work."""
    device = _kind(device)
    d, T, m = shape.hidden, shape.tokens, shape.mlp
    steps = epochs * math.ceil(n / batch_size)
    k = CPU_SECONDS["real_phase2"]
    per_sample = 4 * T * d + 3 * d * d + 4 * d * m
    seconds = steps * (k["a"] * batch_size * runs * per_sample + k["c"])
    seconds += k["a"] * records * (test_rows + n) * runs * per_sample / 3
    params = 4 * 2 * d * d * 4 * runs  # query and key: weights, gradients, two AdamW moments
    evaluation = 4 * 256 * runs * shape.heads * T * 2 + 4 * 256 * runs * (3 * d + m)  # test batches of 256
    # the n rows' final-layer inputs, their pre-norm and values; a test chunk read, trimmed, normed and its values
    inputs = 4 * T * d * (3 * n + 4 * min(test_rows, TEST_CHUNK_ROWS))
    memory = _pooled_bytes(shape, train_rows, test_rows) + inputs + params + evaluation
    return Need.of(memory, seconds / DEVICE_SPEED[device]["real_phase2"])


# ---------------------------------------------------------------- the site's ceilings
