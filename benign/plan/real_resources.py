"""What a real-data job needs: memory (MB) and time (minutes) of the feature, pretraining and
fine-tuning jobs, from the backbone's shape and the rows they hold (docs/cluster.md#what-a-job-asks-for).
The synthetic jobs' needs, the cost model's constants and the site's ceilings are
benign.plan.resources'; this module is apart so that the synthetic half's planning holds
nothing of the real half. A config's real-data cells are split here to fit the site's
ceilings, and its feature caches parted (:func:`split_to_fit`, :func:`feature_parts`), as
the synthetic jobs are in benign.plan.resources. Torch-free: the workflow computes it at parse time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from benign.plan import ConfigError
from benign.plan.config_values import Config
from benign.plan.resources import CPU_SECONDS, DEVICE_SPEED, Need, _kind
from benign.real import registry as real_registry
from benign.real.sizes import BACKBONE_BATCH, TEST_CHUNK_ROWS, held_test, part_ranges  # torch-free


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
    test split is evaluated ``TEST_CHUNK_ROWS`` rows at a time (prepared once and kept where it
    is small enough: ``sizes.held_test``), at each of the ``records`` recorded epochs (with the
    n training rows), a forward pass a third of a training step's work."""
    device = _kind(device)
    d, T, m = shape.hidden, shape.tokens, shape.mlp
    steps = epochs * math.ceil(n / batch_size)
    k = CPU_SECONDS["real_phase2"]
    per_sample = 4 * T * d + 3 * d * d + 4 * d * m
    seconds = steps * (k["a"] * batch_size * runs * per_sample + k["c"])
    seconds += k["a"] * records * (test_rows + n) * runs * per_sample / 3
    params = 4 * 2 * d * d * 4 * runs  # query and key: weights, gradients, two AdamW moments
    evaluation = 4 * 256 * runs * shape.heads * T * 2 + 4 * 256 * runs * (3 * d + m)  # test batches of 256
    # the n rows' final-layer inputs, their pre-norm and values; a test chunk read, trimmed, normed and its values;
    # the test split's pre-norm tokens and values where phase 2 keeps them
    inputs = (
        4 * T * d * (3 * n + 4 * min(test_rows, TEST_CHUNK_ROWS) + (2 * test_rows if held_test(test_rows, T, d) else 0))
    )
    memory = _pooled_bytes(shape, train_rows, test_rows) + inputs + params + evaluation
    return Need.of(memory, seconds / DEVICE_SPEED[device]["real_phase2"])


# ---------------------------------------------------------------- a config's real-data jobs


UNKNOWN_TEST_ROWS = 10000  # the estimates' test split where the config does not give its size
UNKNOWN_TRAIN_ROWS = 60000


def dataset_rows(config: Config, dataset: str, cells: dict[str, dict]) -> dict[str, int]:
    """The rows the estimates count for a data set: every training row (pooled features), the
    fine-tuning pool (final-layer inputs) and the test split."""
    entry = config.real.datasets[dataset]
    sub = entry.get("subsample") or {}
    train = sub.get("train") or entry.get("train_size") or UNKNOWN_TRAIN_ROWS
    mine = [c for c in cells.values() if c["dataset"] == dataset]
    pool = min(train, len({c["seed"] for c in mine}) * max(c["n"] for c in mine))
    test = min(sub.get("test") or entry.get("test_size") or UNKNOWN_TEST_ROWS, entry.get("test_size") or math.inf)
    return dict(train_rows=train, hidden_rows=pool, test_rows=int(test))


def dataset_shape(config: Config, dataset: str) -> BackboneShape:
    """The shape of the backbone a data set of the config reads."""
    entry = config.real.datasets[dataset]
    return backbone_shape(config.real.backbones[entry["backbone"]], entry["modality"])


def feature_parts(config: Config, cells: dict[str, dict]) -> dict[str, int]:
    """{data set: the parts its feature cache is computed in}: 1, or the fewest of 2, 4, 8, ...
    that bring one part's job within the ceilings. Refused where even one backbone batch per
    part does not fit."""
    cluster = config.cluster
    out = {}
    for name in sorted({c["dataset"] for c in cells.values()}):
        shape, rows = dataset_shape(config, name), dataset_rows(config, name, cells)
        most = max(1, math.ceil(max(rows["train_rows"], rows["test_rows"]) / BACKBONE_BATCH))
        parts = 1
        while not cluster.fits(features_need(shape, **rows, device=cluster.device, parts=parts)):
            if parts == most:
                need = features_need(shape, **rows, device=cluster.device, parts=parts)
                raise ConfigError(
                    f"real data set {name}: its features job needs {need.mem_mb} MB and {need.runtime_min} min on "
                    f"{cluster.device} even in {parts} parts of one backbone batch, above {cluster.describe()}: "
                    "raise the ceiling"
                )
            parts = min(most, parts * 2)
        out[name] = parts
    return out


def job_needs(config: Config, cells: dict[str, dict]) -> dict[str, dict[str, Need]]:
    """What each real-data job asks for: {"features": {data set: Need of one of its parts},
    "pretrain": {data set: Need}, "train": {cell id: Need}}, on the config's device kind."""
    device = config.cluster.device
    protocol = config.real.protocol if config.real else {}
    parts = feature_parts(config, cells)
    out: dict[str, dict[str, Need]] = {"features": {}, "pretrain": {}, "train": {}}
    for name in sorted({c["dataset"] for c in cells.values()}):
        entry, shape, rows = config.real.datasets[name], dataset_shape(config, name), dataset_rows(config, name, cells)
        seeds = len({c["seed"] for c in cells.values() if c["dataset"] == name})
        out["features"][name] = features_need(shape, **rows, device=device, parts=parts[name])
        out["pretrain"][name] = pretrain_need(
            shape, len(entry["classes"]), seeds, entry["pretrain_size"], protocol["pretrain_epochs"],
            protocol["batch_size"], **rows, device=device, pooler=entry["modality"] == "text",
        )  # fmt: skip
    for job, cell in cells.items():
        rows = dataset_rows(config, cell["dataset"], cells)
        out["train"][job] = finetune_need(
            dataset_shape(config, cell["dataset"]), cell["n"], len(cell["etas"]), protocol["finetune_epochs"],
            protocol["batch_size"], **rows, device=device, records=len(config.real.records),
        )  # fmt: skip
    return out


def split_to_fit(config: Config, cells: dict[str, dict]) -> dict[str, dict]:
    """Every real-data job within the ceilings: a cell over them becomes ``<cell>-<k>`` cells of
    fewer noise rates (each eta's run is the same in any cell of its seed). A job that cannot
    be split to fit (one eta, a data set's phase 1) is refused; a data set's features are
    computed in parts (:func:`feature_parts`)."""
    cluster = config.cluster
    if (cluster.max_mem_mb is None and cluster.max_runtime_min is None) or not cells:
        return cells
    needs = job_needs(config, cells)
    for rule in ("pretrain",):
        for name, need in needs[rule].items():
            if not cluster.fits(need):
                raise ConfigError(
                    f"real data set {name}: its {rule} job needs {need.mem_mb} MB and {need.runtime_min} min on "
                    f"{cluster.device}, above {cluster.describe()}: raise the ceiling or shrink the data set"
                )
    out = {}
    for job, cell in cells.items():
        parts, etas = [], list(cell["etas"])
        while etas:
            take = len(etas)
            while take and not cluster.fits(job_needs(config, {job: {**cell, "etas": etas[:take]}})["train"][job]):
                take -= 1
            if not take:
                need = job_needs(config, {job: {**cell, "etas": etas[:1]}})["train"][job]
                raise ConfigError(
                    f"real-data job {job}: one run (n {cell['n']}, eta {etas[0]}, seed {cell['seed']}) needs "
                    f"{need.mem_mb} MB and {need.runtime_min} min on {cluster.device}, above {cluster.describe()}"
                )
            parts.append(etas[:take])
            etas = etas[take:]
        if len(parts) == 1:
            out[job] = cell
        else:
            out.update({f"{job}-{k}": {**cell, "etas": part} for k, part in enumerate(parts)})
    return out
