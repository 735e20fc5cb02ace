"""Phase 2 batched over runs (benign/real/batched.py) equals the same runs trained one by one,
and resumes from its checkpoint to the numbers of an uninterrupted call."""

import copy
import logging
import pickle
import signal

import pytest
import torch

from benign.core import stopping
from benign.core.rng import generator
from benign.real.batched import Run, TrainSet, finetune_runs
from benign.real.final_layer import FinalBlock, backbone_pooler, make_head
from benign.real.loop import TrainConfig
from benign.real.reference import finetune_query_key
from tests.helpers.real_data import tiny_model

SEEDS, ETAS, N, T, N_TEST = (3, 8), (0.0, 0.2), 10, 6, 7


def problem(kind: str, dtype: torch.dtype):
    """A tiny backbone's final layer, two seeds' fine-tuning inputs, heads and noisy labels."""
    model = tiny_model(kind).to(dtype)
    block = FinalBlock.from_backbone(model).requires_grad_(False)
    g = torch.Generator().manual_seed(0)
    hidden = torch.randn(len(SEEDS), N, T, 32, generator=g, dtype=dtype)
    test_hidden = torch.randn(N_TEST, T, 32, generator=g, dtype=dtype)
    mask = test_mask = None
    if kind == "bert":  # padded texts: the last positions of some samples are padding
        lengths = torch.randint(2, T + 1, (len(SEEDS), N), generator=g)
        mask = torch.arange(T) < lengths[..., None]
        test_mask = torch.arange(T) < torch.randint(2, T + 1, (N_TEST,), generator=g)[:, None]
    heads = [
        make_head(32, 3, backbone_pooler(model), 0.02, generator(seed, "real_head_init"))
        .to(dtype)
        .requires_grad_(False)
        for seed in SEEDS
    ]
    labels = {(s, eta): torch.randint(0, 3, (N,), generator=g) for s in range(len(SEEDS)) for eta in ETAS}
    noisy = {cell: torch.rand(N, generator=g) < 0.3 for cell in labels}  # which rows count as flipped
    test_set = (test_hidden, test_mask, torch.randint(0, 3, (N_TEST,), generator=g))
    return block, hidden, mask, heads, labels, test_set, noisy


@pytest.mark.parametrize("kind", ["bert", "vit"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_a_batch_of_runs_equals_the_runs_one_by_one(kind, dtype):
    block, hidden, mask, heads, labels, test_set, noisy = problem(kind, dtype)
    cfg = TrainConfig(epochs=4, batch_size=4, log_every=100)  # 10 rows: batches of 4, 4, 2
    record_at = [0, 1, 4]
    cells = [(s, eta) for s in range(len(SEEDS)) for eta in ETAS]
    runs = [
        Run(s, labels[(s, eta)], heads[s], generator(SEEDS[s], "real_qk_init"), noisy[(s, eta)]) for s, eta in cells
    ]
    runs = runs[1:] + runs[:1]  # a set's runs need not be adjacent
    cells = cells[1:] + cells[:1]
    sets = [
        TrainSet(hidden[s], mask[s] if mask is not None else None, generator(seed, "real_finetune_shuffle"))
        for s, seed in enumerate(SEEDS)
    ]
    # the test set read in two chunks, as FeatureCache.test_chunks gives it; the one-run path reads it whole
    chunks = [tuple(t[rows] if t is not None else None for t in test_set) for rows in (slice(0, 4), slice(4, None))]
    batched = finetune_runs(copy.deepcopy(block), runs, sets, chunks, cfg, record_at=record_at)
    tol = dict(rel=1e-9, abs=1e-12) if dtype == torch.float64 else dict(rel=2e-4, abs=1e-6)
    for (s, eta), ours in zip(cells, batched):
        alone = finetune_query_key(
            copy.deepcopy(block), heads[s], (hidden[s], mask[s] if mask is not None else None, labels[(s, eta)]),
            test_set, SEEDS[s], cfg, "alone", record_at, noisy[(s, eta)],
        )  # fmt: skip
        for a, b in zip(alone.history, ours.history):
            assert a.epoch == b.epoch and a.acc == pytest.approx(b.acc)
            assert b.loss == pytest.approx(a.loss, **tol) and b.max_attention == pytest.approx(a.max_attention, **tol)
        for key in ("train_loss", "test_loss"):
            assert getattr(ours, key) == pytest.approx(getattr(alone, key), **tol)
        assert (ours.train_acc, ours.test_acc) == (alone.train_acc, alone.test_acc)
        assert [r.epoch for r in ours.records] == [r.epoch for r in alone.records] == record_at
        for a, b in zip(alone.records, ours.records):  # test loss and accuracy, clean and noisy train accuracy
            assert b.test_loss == pytest.approx(a.test_loss, **tol)
            assert (b.test_acc, b.train_acc_clean, b.train_acc_noisy) == (
                a.test_acc,
                a.train_acc_clean,
                a.train_acc_noisy,
            )
        assert ours.records[-1].test_acc == ours.test_acc and ours.records[-1].test_loss == ours.test_loss
    # the runs really differ (seeds and labels), so equality is not that of one run copied
    assert len({round(r.history[-1].loss, 8) for r in batched}) == len(batched)


class CountedChunks:
    """The test chunks, counting how often they are read."""

    def __init__(self, chunks):
        self.chunks, self.reads = chunks, 0

    def __iter__(self):
        self.reads += 1
        yield from self.chunks


def test_holding_the_test_split_reads_it_once_and_changes_no_number():
    block, hidden, mask, heads, labels, test_set, noisy = problem("bert", torch.float32)
    cfg = TrainConfig(epochs=4, batch_size=4, log_every=100)
    record_at = [0, 1, 2, 4]
    results = {}
    for hold in (False, True):
        runs = [
            Run(0, labels[(0, eta)], heads[0], generator(SEEDS[0], "real_qk_init"), noisy[(0, eta)]) for eta in ETAS
        ]
        sets = [TrainSet(hidden[0], mask[0], generator(SEEDS[0], "real_finetune_shuffle"))]
        chunks = CountedChunks(
            [tuple(t[rows] if t is not None else None for t in test_set) for rows in (slice(0, 4), slice(4, None))]
        )
        results[hold] = finetune_runs(
            copy.deepcopy(block), runs, sets, chunks, cfg, record_at=record_at, hold_test=hold
        )
        # every recorded epoch and the final evaluation read the split; held, only the first reads it
        assert chunks.reads == (1 if hold else len(record_at) + 1)
    for kept, read in zip(results[True], results[False], strict=True):
        assert [r.values() for r in kept.records] == [r.values() for r in read.records]
        assert (kept.test_loss, kept.test_acc, kept.history) == (read.test_loss, read.test_acc, read.history)


def no_step(*args, **kwargs):
    raise AssertionError("an optimiser step ran: the finished state was not used")


def test_a_stopped_phase_two_resumes_from_its_checkpoint_to_the_same_result(tmp_path, caplog, monkeypatch):
    """A signal during epoch 1 (benign.core.stopping.STOP): the state after it is saved and the job exits 75; a
    second call resumes from the checkpoint and ends as an uninterrupted call. A checkpoint that
    is a crafted pickle is refused and phase 2 starts again."""
    block, hidden, mask, heads, labels, test_set, noisy = problem("bert", torch.float64)
    cfg = TrainConfig(epochs=5, batch_size=4, log_every=100)

    def call(**checkpointing):
        runs = [
            Run(s, labels[(s, eta)], heads[s], generator(SEEDS[s], "real_qk_init"), noisy[(s, eta)])
            for s in range(2)
            for eta in ETAS
        ]
        sets = [TrainSet(hidden[s], mask[s], generator(seed, "real_finetune_shuffle")) for s, seed in enumerate(SEEDS)]
        return finetune_runs(
            copy.deepcopy(block), runs, sets, [test_set], cfg, identity="cell", record_at=[0, 1, 3, 5], **checkpointing
        )

    whole = call()
    path = tmp_path / "cell.pt"
    stopping.STOP.signal = signal.SIGTERM
    try:
        with pytest.raises(SystemExit) as stopped:
            call(checkpoint=path, checkpoint_every=0)
    finally:
        stopping.STOP.signal = None
    assert stopped.value.code == 75 and path.exists()
    with caplog.at_level(logging.INFO, logger="benign.real"):
        resumed = call(checkpoint=path, checkpoint_every=2)
    assert "resumed phase 2 from its checkpoint" in caplog.text and "after epoch 1" in caplog.text
    assert path.exists()  # the finished state stays until the workflow has the job's outputs
    for a, b in zip(whole, resumed):
        assert len(a.records) == 4 and str(a.records) == str(
            b.records
        )  # NaN-safe equality, epoch 0 kept from before the stop
        assert a.history == b.history and (a.train_loss, a.test_loss, a.test_acc) == (
            b.train_loss,
            b.test_loss,
            b.test_acc,
        )

    # a job ruled failed after its last epoch (its outputs removed): the retry resumes from the
    # finished state, takes no optimiser step, and ends with the same numbers
    with monkeypatch.context() as m, caplog.at_level(logging.INFO, logger="benign.real"):
        m.setattr(torch.optim.AdamW, "step", no_step)
        retried = call(checkpoint=path, checkpoint_every=2)
    assert f"after epoch {cfg.epochs}" in caplog.text
    for a, b in zip(whole, retried):
        assert a.history == b.history and str(a.records) == str(b.records)
        assert (a.train_loss, a.train_acc, a.test_loss, a.test_acc) == (
            b.train_loss,
            b.train_acc,
            b.test_loss,
            b.test_acc,
        )

    # a checkpoint of another layout (here: one written before runs recorded their test metrics)
    # is refused as a whole: the run starts again from a fresh state and ends as an uninterrupted one
    path.unlink()
    stopping.STOP.signal = signal.SIGTERM
    try:
        with pytest.raises(SystemExit):
            call(checkpoint=path, checkpoint_every=0)
    finally:
        stopping.STOP.signal = None
    state = torch.load(path, weights_only=True)
    del state["records"]
    torch.save(state, path)
    with caplog.at_level(logging.WARNING, logger="benign.real"):
        older = call(checkpoint=path, checkpoint_every=2)
    assert f"refusing checkpoint {path} ('records')" in caplog.text
    for a, b in zip(whole, older):
        assert a.history == b.history and str(a.records) == str(b.records) and a.test_loss == b.test_loss

    path.write_bytes(pickle.dumps(Exploit()))
    with caplog.at_level(logging.WARNING, logger="benign.real"):
        again = call(checkpoint=path, checkpoint_every=2)
    assert f"refusing checkpoint {path}" in caplog.text and not EXPLOITED
    assert [r.history for r in again] == [r.history for r in whole]


EXPLOITED = []


class Exploit:
    """A pickle that would run code when loaded without weights_only."""

    def __reduce__(self):
        return (EXPLOITED.append, ("ran",))
