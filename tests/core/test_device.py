"""Device choice: overrides, and one GPU per concurrent local job."""

import subprocess
import sys

import torch

from benign.core import device


def test_override_and_cpu_fallback(monkeypatch):
    monkeypatch.setenv("BENIGN_DEVICE", "cpu")
    assert device.pick_device() == torch.device("cpu")
    assert device.pick_device("cpu") == torch.device("cpu")
    monkeypatch.delenv("BENIGN_DEVICE")
    if not torch.cuda.is_available():
        assert device.pick_device().type in ("cpu", "mps")


def test_concurrent_jobs_claim_different_gpus(tmp_path, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    code = (
        "import sys, time; from pathlib import Path; from benign.core.device import claim_gpu; "
        f"print(claim_gpu(3, Path({str(tmp_path)!r})), flush=True); time.sleep(3)"
    )
    first = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    second = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    got = {int(first.stdout.readline()), int(second.stdout.readline())}
    first.wait(), second.wait()
    assert len(got) == 2 and got <= {0, 1, 2}  # two live jobs never share a GPU while one is free


def test_inside_slurm_the_first_visible_gpu(monkeypatch):
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    assert device.claim_gpu(4) == 0
