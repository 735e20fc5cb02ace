"""A training job killed mid-training resumes from its checkpoint with the same result."""

import os
import signal
import subprocess
import sys
import time

import torch

from benign.trainer import RunSpec, train_runs

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
sys.path.insert(0, {tests!r})
from test_checkpoint import SPECS
from benign.trainer import train_runs
train_runs(SPECS, device="cpu", checkpoint_dir={folder!r}, checkpoint_every=50)
"""


def _strip(frames):
    runs, curves, attention = frames
    return runs.drop(columns=["wall_time_s"]).sort_values("run_id").reset_index(drop=True), curves, attention


def test_killed_job_resumes_to_the_same_result(tmp_path):
    folder = tmp_path / "ckpt"
    code = CHILD.format(tests=os.path.dirname(__file__), folder=str(folder))
    child = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and not list(folder.glob("running-*.pt")):
        time.sleep(0.05)
    time.sleep(0.5)
    os.killpg(child.pid, signal.SIGKILL)
    child.wait()
    saved = list(folder.glob("running-*.pt"))
    assert saved, "the child wrote no checkpoint before it was killed"
    step = torch.load(saved[0], weights_only=False)["step"]
    assert 0 < step < 1500
    resumed = _strip(train_runs(SPECS, device="cpu", checkpoint_dir=folder, checkpoint_every=50))
    assert not folder.exists()  # removed once every batch is done
    fresh = _strip(train_runs(SPECS, device="cpu"))
    for a, b in zip(resumed, fresh):
        assert a.equals(b)
