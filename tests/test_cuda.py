"""The same runs on CUDA (float32) and on the CPU in float64: the GPU path must give the same
metrics and attention. Skipped without CUDA; benchmarks/gpu_suite.sh runs this file first."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from benign.trainer import RunSpec, train_runs

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")

METRICS = ["train_loss", "test_loss"]
ACCURACIES = ["train_acc", "test_acc", "train_acc_clean", "train_acc_noisy"]


def both(specs: list[RunSpec]):
    cpu = train_runs(specs, device="cpu", dtype=torch.float64)
    gpu = train_runs(specs, device="cuda")  # the library's CUDA default: float32
    return cpu, gpu


def compare(cpu, gpu, rtol: float, atol: float) -> None:
    runs_c, curves_c, att_c = cpu
    runs_g, curves_g, att_g = gpu
    assert list(runs_g["run_id"]) == list(runs_c["run_id"])
    assert all(str(d).startswith("cuda") for d in runs_g["device"])
    key = ["run_id", "step"]
    c = curves_c.sort_values(key).reset_index(drop=True)
    g = curves_g.sort_values(key).reset_index(drop=True)
    assert len(c) == len(g) > 0
    for col in METRICS:
        np.testing.assert_allclose(g[col].to_numpy(), c[col].to_numpy(), rtol=rtol, atol=atol, err_msg=col)
    for col in ACCURACIES:
        np.testing.assert_allclose(g[col].to_numpy(), c[col].to_numpy(), atol=0.011, err_msg=col)  # one sample at most
    if len(att_c):
        k = ["run_id", "step", "sample", "token"]
        a, b = att_c.sort_values(k), att_g.sort_values(k)
        np.testing.assert_allclose(b["probability"].to_numpy(), a["probability"].to_numpy(), atol=1e-5)


def test_token_model_on_cuda_matches_cpu_float64():
    specs = [
        RunSpec(d=300, signal_norm=m, steps=60, n_test=200, log_every=10, record_attention=(m == 20.0))
        for m in (5.0, 20.0, 60.0)
    ]
    compare(*both(specs), rtol=1e-4, atol=1e-6)


def test_encoder_on_cuda_matches_cpu_float64():
    specs = [
        RunSpec(model="encoder", d=96, mlp_dim=64, signal_norm=m, steps=40, n_test=200, log_every=10,
                record_attention=(m == 20.0))  # fmt: skip
        for m in (5.0, 20.0)
    ]
    compare(*both(specs), rtol=1e-4, atol=1e-5)
