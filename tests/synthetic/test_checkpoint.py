"""A training job killed mid-training resumes from its checkpoint with the same result."""

import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
import torch

from benign.core import stopping
from benign.core.schema import MEASURED
from benign.synthetic import trainer
from benign.synthetic.trainer import RunSpec, train_batch, train_runs

SPECS = [
    RunSpec(
        model="encoder",
        n=10,
        T=4,
        d=16,
        mlp_dim=8,
        n_test=20,
        steps=1500,
        lr=0.05,
        signal_norm=m,
        seed=1,
        log_every=100,
    )
    for m in (3.0, 6.0)
] + [RunSpec(n=10, T=4, d=30, n_test=20, steps=1500, lr=0.05, signal_norm=5.0, seed=2, log_every=100)]
CHILD = """
import sys, torch
torch.set_num_threads(1)
sys.path.insert(0, {root!r})
from tests.synthetic.test_checkpoint import SPECS
from benign.synthetic.trainer import stop_on_signals, train_runs
stop_on_signals()
train_runs(SPECS, device="cpu", checkpoint_dir={folder!r}, checkpoint_every={every})
"""


def _strip(frames):
    runs, curves, attention = frames
    runs = runs.drop(columns=[c for c in MEASURED if c in runs])
    return runs.sort_values("run_id").reset_index(drop=True), curves, attention


def test_killed_job_resumes_to_the_same_result(tmp_path):
    folder = tmp_path / "ckpt"
    code = CHILD.format(
        root=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), folder=str(folder), every=50
    )
    child = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and not list(folder.glob("running-*.pt")):
        time.sleep(0.05)
    time.sleep(0.5)
    os.killpg(child.pid, signal.SIGKILL)
    child.wait()
    saved = list(folder.glob("running-*.pt"))
    assert saved, "the child wrote no checkpoint before it was killed"
    step = torch.load(saved[0], weights_only=True)["step"]  # tensors and plain values only
    assert 0 < step < 1500
    resumed = _strip(train_runs(SPECS, device="cpu", checkpoint_dir=folder, checkpoint_every=50))
    assert len(list(folder.glob("done-*"))) == 2 and not list(folder.glob("running-*"))  # kept until released
    fresh = _strip(train_runs(SPECS, device="cpu"))
    for a, b in zip(resumed, fresh):
        assert a.equals(b)


def no_training(*args, **kwargs):
    raise AssertionError("a batch trained again: its finished state was not used")


def test_a_job_killed_between_its_last_step_and_its_outputs_writes_them_without_training(tmp_path, monkeypatch):
    """The job finished every batch, then died before writing its outputs (or SLURM ruled it
    out of time while it wrote them): its retry reads the kept frames and trains nothing."""
    folder = tmp_path / "ckpt"
    first = _strip(train_runs(SPECS, device="cpu", checkpoint_dir=folder))
    monkeypatch.setattr("benign.synthetic.trainer.train_batch", no_training)
    retried = _strip(train_runs(SPECS, device="cpu", checkpoint_dir=folder))
    for a, b in zip(retried, first):
        pd.testing.assert_frame_equal(a, b, check_dtype=False)


def test_state_of_other_runs_or_code_is_removed_never_read(tmp_path, monkeypatch):
    folder = tmp_path / "ckpt"
    train_runs(SPECS[:1], device="cpu", checkpoint_dir=folder, code_version="old")
    (old,) = folder.glob("done-*")
    calls = []
    monkeypatch.setattr("benign.synthetic.trainer.train_batch", lambda *a, **k: calls.append(1) or train_batch(*a, **k))
    train_runs(SPECS[:1], device="cpu", checkpoint_dir=folder, code_version="new")
    assert calls == [1] and not old.exists() and len(list(folder.glob("done-*"))) == 1


class Exploit:
    """A pickle that runs code when loaded: it creates the file ``marker``."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.mark.parametrize("payload", ["exploit", "garbage"])
def test_a_checkpoint_that_is_not_plain_tensors_is_refused_and_the_batch_recomputes(tmp_path, caplog, payload):
    specs = [s for s in SPECS if s.model == "encoder"]
    checkpoint = tmp_path / "running-x.pt"
    marker = tmp_path / "code-ran"
    if payload == "exploit":
        torch.save({"identity": [], "step": 7, "hook": Exploit(marker)}, checkpoint)
    else:
        checkpoint.write_bytes(b"not a checkpoint")
    with caplog.at_level("WARNING", logger="benign"):
        got = _strip(train_batch(specs, device="cpu", checkpoint=checkpoint, checkpoint_every=500))
    assert not marker.exists(), "loading the checkpoint ran code"
    assert f"refusing checkpoint {checkpoint}: not a checkpoint of tensors and plain values" in caplog.text
    assert all(a.equals(b) for a, b in zip(got, _strip(train_batch(specs, device="cpu"))))
    assert not checkpoint.exists()  # replaced by the recomputation's own and removed when done


def test_finished_batches_are_kept_as_parquet(tmp_path):
    """A job killed between batches keeps the finished ones as Parquet frames, read back exactly."""
    from benign.synthetic.trainer import load_frames, save_frames

    frames = train_batch(SPECS[:1], device="cpu")
    save_frames(tmp_path / "done-x", frames)
    assert sorted(p.name for p in (tmp_path / "done-x").iterdir()) == [
        "attention.parquet",
        "curves.parquet",
        "runs.parquet",
    ]
    for a, b in zip(load_frames(tmp_path / "done-x"), frames):
        pd.testing.assert_frame_equal(a, b, check_dtype=False)


def test_a_job_told_to_stop_checkpoints_exits_75_and_resumes_to_the_same_result(tmp_path):
    """SLURM's SIGTERM at a time limit: the job writes its checkpoint at the end of the step it
    is in, exits with 75, and the retry resumes from it."""
    folder = tmp_path / "ckpt"
    code = CHILD.format(
        root=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), folder=str(folder), every=100
    )
    child = subprocess.Popen([sys.executable, "-c", code], start_new_session=True, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not list(folder.glob("running-*.pt")):  # training has started
        time.sleep(0.05)
    child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 75, err[-2000:]
    assert "stopped by signal 15 at step" in err and "a retry resumes from it" in err
    saved = list(folder.glob("running-*.pt"))
    assert saved and 0 < torch.load(saved[0], weights_only=True)["step"] < 1500
    resumed = _strip(train_runs(SPECS, device="cpu", checkpoint_dir=folder, checkpoint_every=100))
    fresh = _strip(train_runs(SPECS, device="cpu"))
    for a, b in zip(resumed, fresh):
        assert a.equals(b)


class StateModel:
    def state(self) -> dict:
        return {"p": torch.zeros(2)}


def test_a_batch_saves_every_so_many_steps_and_on_a_stop_signal(tmp_path):
    path = tmp_path / "batch.pt"
    state = lambda step: (["run"], StateModel(), [], [], step, 1.5)  # noqa: E731
    trainer._checkpoint_or_stop(path, 10, state(7))
    assert not path.exists()  # not a multiple of 10
    trainer._checkpoint_or_stop(path, 10, state(20))
    assert trainer.load_checkpoint(path, "cpu")["step"] == 20
    trainer._checkpoint_or_stop(None, 10, state(30))  # no checkpoint asked for: nothing written
    stopping.STOP.signal = signal.SIGTERM
    try:
        with pytest.raises(stopping.Stopped):
            trainer._checkpoint_or_stop(path, 0, state(23))  # never periodically, but on the signal
    finally:
        stopping.STOP.signal = None
    assert trainer.load_checkpoint(path, "cpu")["step"] == 23


def test_a_batch_checkpoints_every_few_steps_but_not_at_its_last(tmp_path, monkeypatch):
    """Gradient descent of 1500 steps saving every 500: at steps 500 and 1000, not at 1500,
    where the batch ends and its tables follow."""
    saved = []
    monkeypatch.setattr(
        trainer, "save_checkpoint", lambda path, identity, state, curves, attention, step, *a, **k: saved.append(step)
    )
    specs = [s for s in SPECS if s.model == "encoder"]
    train_batch(specs, device="cpu", checkpoint=tmp_path / "running-x.pt", checkpoint_every=500)
    assert saved == [500, 1000]
