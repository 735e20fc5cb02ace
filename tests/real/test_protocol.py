"""The real-data protocol end to end on tiny random backbones: fetch, features, both phases, frames."""

import dataclasses
import logging
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from benign.core.schema import read_parquet, write_parquet
from benign.real.backbones import load_backbone
from benign.real.batched import RunResult
from benign.real.datasets import fetch_dataset, load_dataset
from benign.real.features import compute_features, load_features, trim_padding
from benign.real.heads import load_heads, pretrain_heads, save_heads
from benign.real.loop import Epoch, TrainConfig
from benign.real.protocol import finetune_pool, phase_two_frames, pretrain, run_cell, split_indices
from benign.real.records import Record
from benign.real.reference import pretrain_head
from benign.real.schema import REAL_ATTENTION, REAL_CURVES, REAL_RUNS

TEXT_ENTRY = dict(name="tiny_text", label="tiny text", modality="text", classes=["bad", "good"], pretrain_size=6)
IMAGE_ENTRY = dict(
    name="tiny_images",
    label="tiny images",
    paper_dataset="MNIST",
    modality="image",
    classes=["a", "b", "c"],
    pretrain_size=6,
)


def test_split_is_disjoint_seeded_and_nested_across_n():
    pre, fine = split_indices(100, 30, 20, seed=42)
    assert len(pre) == 30 and len(fine) == 20 and not set(pre.tolist()) & set(fine.tolist())
    pre_small, fine_small = split_indices(100, 30, 10, seed=42)
    assert torch.equal(pre, pre_small) and torch.equal(fine[:10], fine_small)
    assert not torch.equal(split_indices(100, 30, 20, seed=314)[1], fine)
    with pytest.raises(ValueError, match="exceeds"):
        split_indices(100, 90, 20, seed=42)


def test_finetune_pool_covers_every_seed_and_n():
    pool = set(finetune_pool(100, 30, 20, [42, 314]))
    for seed in (42, 314):
        for n in (5, 20):
            assert set(split_indices(100, 30, n, seed)[1].tolist()) <= pool


@pytest.fixture(scope="module")
def features(fixtures, tiny_backbones, tmp_path_factory):
    """Feature caches of the tiny text and image data sets; the text one keeps only the fine-tuning pool."""
    root = tmp_path_factory.mktemp("real")
    text = dict(TEXT_ENTRY, source={"kind": "folder", "path": str(fixtures / "folder_text")})
    image = dict(IMAGE_ENTRY, source={"kind": "folder", "path": str(fixtures / "folder_image")})
    fetch_dataset(text, root / "text")
    fetch_dataset(image, root / "image")
    pool = finetune_pool(12, 6, 4, [42])
    return {
        "text": (
            text,
            compute_features(tiny_backbones["text"], root / "text", root / "text.safetensors", train_rows=pool),
        ),
        "image": (image, compute_features(tiny_backbones["image"], root / "image", root / "image.safetensors")),
    }


def test_cache_holds_what_training_needs(features):
    cache = load_features(features["text"][1])
    assert cache.train_pooled.shape == (12, 32) and cache.test_pooled.shape == (6, 32)
    assert cache.train_rows.tolist() == finetune_pool(12, 6, 4, [42])
    hidden, mask = cache.train_hidden(cache.train_rows[:2])
    assert hidden.shape == (2, 10, 32) and mask.dtype == torch.bool
    assert cache.meta["backbone_spec"]["name"] == "tinybert" and cache.pooler_state is not None
    with pytest.raises(ValueError, match="finetune_pool"):
        cache.train_hidden(torch.tensor([int(r) for r in range(12) if r not in cache.train_rows.tolist()][:1]))


def test_text_cache_equals_the_backbone_on_the_padded_texts(features, tiny_backbones):
    """The cache runs each batch cut after its last real token; the reference runs the whole
    max_length: same states at the real tokens, the same mask, zeros past the cut."""
    cache = load_features(features["text"][1])
    backbone = load_backbone(tiny_backbones["text"])
    inputs = backbone.inputs(load_dataset(features["text"][1].parent / "text").x_test)
    longest = int(inputs["attention_mask"].sum(1).max())
    assert longest < inputs["attention_mask"].shape[1]  # the cut is exercised
    with torch.no_grad():
        out = backbone.model(**inputs, output_hidden_states=True)
    hidden, mask = cache.test_hidden()
    real = inputs["attention_mask"].bool()
    assert torch.equal(mask, real)
    torch.testing.assert_close(hidden[real], out.hidden_states[-2][real], rtol=1e-5, atol=1e-5)
    assert torch.count_nonzero(hidden[:, longest:]) == 0
    torch.testing.assert_close(cache.test_pooled, out.last_hidden_state[:, 0], rtol=1e-5, atol=1e-5)


def test_trim_padding_cuts_right_padded_texts_only():
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 0, 0, 0, 0]])
    ids = torch.arange(10).view(2, 5)
    full, cut = trim_padding({"input_ids": ids, "attention_mask": mask})
    assert full == 5 and torch.equal(cut["input_ids"], ids[:, :3]) and torch.equal(cut["attention_mask"], mask[:, :3])
    empty = torch.tensor([[1, 1, 0], [0, 0, 0]])  # a text with no token attends to every pad: nothing is cut
    assert trim_padding({"input_ids": ids[:, :3], "attention_mask": empty})[1]["attention_mask"].shape == (2, 3)
    pixels = {"pixel_values": torch.zeros(1, 3, 4, 4)}
    assert trim_padding(pixels) == (None, pixels)
    with pytest.raises(ValueError, match="padded on the right"):
        trim_padding({"input_ids": ids, "attention_mask": mask.flip(1)})


@pytest.mark.parametrize("modality", ["image", "text"])
def test_cached_block_reproduces_the_pooled_features(features, modality):
    cache = load_features(features[modality][1])
    hidden, mask = cache.test_hidden()
    with torch.no_grad():
        out, _ = cache.block()(hidden, mask)
    torch.testing.assert_close(out, cache.test_pooled, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("modality", ["image", "text"])
def test_run_cell_end_to_end(features, modality, tmp_path, caplog):
    entry, path = features[modality]
    etas = [0.0, 0.5]
    with caplog.at_level(logging.INFO, logger="benign.real"):
        save_heads(pretrain(path, entry, [42, 7], pretrain_epochs=3), tmp_path / "heads.safetensors")
        heads = load_heads(tmp_path / "heads.safetensors")
        runs, attention, curves = run_cell(
            path, heads, entry, n=4, etas=etas, seed=42, finetune_epochs=4, log_every=2, code_version="abc", records=3
        )
    write_parquet(runs, REAL_RUNS, tmp_path / "runs.parquet")
    write_parquet(attention, REAL_ATTENTION, tmp_path / "attention.parquet")
    write_parquet(curves, REAL_CURVES, tmp_path / "curves.parquet")
    runs = read_parquet(tmp_path / "runs.parquet", REAL_RUNS)
    attention = read_parquet(tmp_path / "attention.parquet", REAL_ATTENTION)
    curves = read_parquet(tmp_path / "curves.parquet", REAL_CURVES)

    assert runs["eta"].tolist() == etas and (runs["status"] == "ok").all()
    assert runs["baseline_acc"].eq(heads.baseline_acc[42]).all() and runs["code_version"].eq("abc").all()
    assert runs["pretrain_epochs"].eq(3).all() and runs["pretrain_size"].eq(entry["pretrain_size"]).all()
    assert runs["dataset_label"].eq(entry["label"]).all() and runs["device"].eq("cpu").all()
    numbers = runs[
        ["baseline_acc", "train_loss_last_epoch", "train_loss", "train_acc", "test_loss", "test_acc", "wall_time_s"]
    ]
    assert np.isfinite(numbers.to_numpy()).all()
    assert (
        len(attention) == len(etas) * 4
        and attention.groupby("run_id")["epoch"].apply(list).eq([[1, 2, 3, 4]] * 2).all()
    )
    assert attention["max_attention"].between(0, 1).all()
    assert (
        attention.groupby("run_id").tail(1)["train_loss"].to_numpy() == runs["train_loss_last_epoch"].to_numpy()
    ).all()
    assert "phase 2, 2 noise rates: epoch 4/4 loss per run" in caplog.text and "elapsed" in caplog.text
    # the configured epochs are the recorded ones; the runs table's columns read from them
    assert curves.groupby("run_id")["epoch"].apply(list).eq([[0, 1, 4]] * 2).all()
    first, last = curves.groupby("run_id").head(1), curves.groupby("run_id").tail(1)
    assert first["test_acc"].tolist() == runs["reinit_test_acc"].tolist()
    assert last["test_acc"].tolist() == runs["test_acc"].tolist()
    assert runs["peak_test_acc"].tolist() == curves.groupby("run_id", sort=False)["test_acc"].max().tolist()
    assert runs["n_noisy"].tolist()[0] == 0 and runs["n_noisy"].tolist()[1] > 0
    assert curves[curves["eta"] == 0.0]["train_acc_noisy"].isna().all()
    assert runs["uniform_test_acc"].between(0, 1).all() and runs["attention_share"].between(0, 1).all()
    assert runs["uniform_test_acc"].nunique() == 1 and runs["attention_share"].nunique() == 1  # one seed's head
    assert "phase 1: epoch 3/3 loss per seed" in caplog.text


def test_run_cell_is_deterministic(features):
    entry, path = features["image"]
    a, att_a, curves_a = run_cell(
        path, pretrain(path, entry, [7], pretrain_epochs=2), entry, n=4, etas=[0.5], seed=7, finetune_epochs=2
    )
    b, att_b, curves_b = run_cell(
        path, pretrain(path, entry, [7], pretrain_epochs=2), entry, n=4, etas=[0.5], seed=7, finetune_epochs=2
    )
    columns = ["baseline_acc", "train_loss", "test_loss", "train_acc", "test_acc"]
    assert a[columns].equals(b[columns]) and att_a["max_attention"].equals(att_b["max_attention"])
    assert curves_a.equals(curves_b)


def test_run_cell_refuses_a_cache_of_another_data_set(features):
    entry, path = features["image"]
    heads = pretrain(path, entry, [42], pretrain_epochs=1)
    with pytest.raises(ValueError, match="holds features of 'tiny_images'"):
        run_cell(path, heads, dict(entry, name="other"), n=4, etas=[0.0], seed=42, finetune_epochs=1)
    with pytest.raises(ValueError, match="seeds \\[42\\], not 'tiny_images' seed 7"):
        run_cell(path, heads, entry, n=4, etas=[0.0], seed=7, finetune_epochs=1)
    with pytest.raises(ValueError, match="pretrained on 6 rows, the entry says 5"):
        run_cell(path, heads, dict(entry, pretrain_size=5), n=4, etas=[0.0], seed=42, finetune_epochs=1)


@pytest.mark.parametrize("modality", ["image", "text"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_phase_one_of_all_seeds_equals_each_seed_alone(features, modality, dtype):
    """heads.pretrain_heads (the seeds stacked, one program) against reference.pretrain_head (one seed)."""
    entry, path = features[modality]
    cache = load_features(path)
    cache = dataclasses.replace(
        cache, train_pooled=cache.train_pooled.to(dtype), test_pooled=cache.test_pooled.to(dtype)
    )
    seeds = [42, 7, 314]
    rows = [split_indices(len(cache.y_train), 5, 0, seed)[0] for seed in seeds]  # 5 rows: batches of 2, 2, 1
    cfg = TrainConfig(epochs=6, lr=5e-3, batch_size=2, log_every=100)
    together = pretrain_heads(cache, rows, seeds, cfg, "cpu")
    tol = dict(rtol=1e-9, atol=1e-12) if dtype == torch.float64 else dict(rtol=2e-5, atol=1e-6)
    for seed, r in zip(seeds, rows):
        alone = pretrain_head(cache, r, len(entry["classes"]), seed, cfg, "cpu")
        for (key, a), b in zip(alone.head.state_dict().items(), together.heads[seed].state_dict().values()):
            torch.testing.assert_close(b, a, **tol, msg=key)
        assert together.baseline_acc[seed] == alone.baseline_acc
    first = [together.heads[s].classifier.weight for s in seeds]
    assert not torch.equal(first[0], first[1]) and not torch.equal(first[1], first[2])


@pytest.mark.parametrize("modality", ["image", "text"])
def test_a_cache_in_parts_holds_what_one_file_holds(features, tiny_backbones, modality, tmp_path):
    """compute_features(part=(k, 3)) for k = 0, 1, 2 (12 training rows: batches of 4 in three
    parts; 6 test rows: two batches, so one part has none) against the whole cache in one pass."""
    entry, _ = features[modality]
    data = tmp_path / "data"
    fetch_dataset(entry, data)
    rows = finetune_pool(12, 6, 4, [42]) if modality == "text" else None
    spec = tiny_backbones[modality]
    whole = load_features(compute_features(spec, data, tmp_path / "whole.safetensors", train_rows=rows, batch_size=4))
    paths = [
        compute_features(spec, data, tmp_path / f"{k}.safetensors", train_rows=rows, batch_size=4, part=(k, 3))
        for k in (2, 0, 1)
    ]
    parts = load_features(paths)
    assert [p.name for p in parts.paths] == ["0.safetensors", "1.safetensors", "2.safetensors"]
    assert parts.part_test_rows == [(0, 0), (0, 4), (4, 6)]
    for key in ("train_pooled", "test_pooled", "y_train", "y_test", "train_rows"):
        assert torch.equal(getattr(parts, key), getattr(whole, key)), key
    assert parts.meta == whole.meta
    picked = whole.train_rows[[3, 0, 2]]  # rows from different parts, out of order
    for a, b in zip(parts.train_hidden(picked), whole.train_hidden(picked)):
        assert (a is None and b is None) or torch.equal(a, b)
    for a, b in zip(parts.test_hidden(), whole.test_hidden()):
        assert (a is None and b is None) or torch.equal(a, b)
    chunks = list(parts.test_chunks(rows=4))  # a chunk across two parts
    assert [len(y) for *_, y in chunks] == [4, 2]
    assert torch.equal(torch.cat([h for h, *_ in chunks]), whole.test_hidden()[0])

    heads = pretrain(paths, entry, [42], pretrain_epochs=2)
    assert heads.baseline_acc == pretrain(whole.path, entry, [42], pretrain_epochs=2).baseline_acc
    kw = dict(n=4, etas=[0.0, 0.5], seed=42, finetune_epochs=2)
    ours, whole_runs = run_cell(paths, heads, entry, **kw)[0], run_cell(whole.path, heads, entry, **kw)[0]
    columns = ["train_loss", "test_loss", "train_acc", "test_acc"]
    assert ours[columns].equals(whole_runs[columns])
    with pytest.raises(ValueError, match=r"expected parts 0\.\.2 .* found parts \[0, 2\]"):
        load_features([paths[0], paths[1]])


def test_a_cells_frames_have_the_schemas_columns_and_one_row_per_run():
    records = [Record(epoch=e, test_loss=0.5, test_acc=0.9, train_acc_clean=1.0, train_acc_noisy=f)
               for e, f in ((0, 0.0), (5, 1.0))]  # fmt: skip
    result = RunResult([Epoch(1, 0.7, 0.8, 0.3), Epoch(2, 0.6, 0.9, 0.4)], 0.6, 0.9, 0.5, 0.88, records)
    batch = [
        SimpleNamespace(noisy=torch.tensor([True, False, True])),
        SimpleNamespace(noisy=torch.zeros(3, dtype=bool)),
    ]
    runs, attention, curves = phase_two_frames(("mnist", "vit", 20, 42), [0.2, 0.0], [result, result], batch,
                                               {"baseline_acc": 0.95}, (100.0, 0.0))  # fmt: skip
    assert list(runs.columns) == REAL_RUNS.names and list(attention.columns) == REAL_ATTENTION.names
    assert list(curves.columns) == REAL_CURVES.names
    assert list(runs["run_id"]) == ["mnist__vit__n20__eta0.200__seed42", "mnist__vit__n20__eta0.000__seed42"]
    assert list(runs["n_noisy"]) == [2, 0] and (runs["baseline_acc"] == 0.95).all()
    assert len(attention) == 4 and len(curves) == 4 and set(curves["eta"]) == {0.2, 0.0}
