"""The same runs on CUDA (float32) and on the CPU in float64: the GPU path must give the same
metrics and attention. Skipped without CUDA; benchmarks/gpu_suite.sh runs this file first."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from benign.synthetic.trainer import RunSpec, train_runs

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
    n_train = runs_c["n"].to_numpy()[0]
    for col, n in (("train_acc", n_train), ("test_acc", runs_c["n_test"].to_numpy()[0])):
        counts = g[col].to_numpy() * n  # accuracy is a count over n, exactly (not a CUDA mean)
        np.testing.assert_array_equal(g[col].to_numpy(), np.round(counts) / n, err_msg=col)
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
        RunSpec(
            model="encoder",
            d=96,
            mlp_dim=64,
            signal_norm=m,
            steps=40,
            n_test=200,
            log_every=10,
            record_attention=(m == 20.0),
        )  # fmt: skip
        for m in (5.0, 20.0)
    ]
    compare(*both(specs), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("defer_steps", [0, 3])
def test_encoder_cuda_graph_replays_the_eager_step(monkeypatch, defer_steps):
    """The captured step graphs (one per state of the pending updates: 1 without deferral, 3
    with updates deferred by 3 steps) give the eager step's numbers, an evaluation (which
    folds the pending updates early) in between."""
    from benign.synthetic import models

    def run(graphs: str):
        monkeypatch.setenv("BENIGN_CUDA_GRAPHS", graphs)
        m = models.build("encoder", n=20, T=8, d=128, sigma=1.0, n_test=50, seed=42, mlp_dim=64, signal_norms=[5.0, 20.0],
                         rhos=[0.1, 0.1], etas=[0.2, 0.2], lrs=[5e-3, 5e-3], device="cuda",
                         defer_steps=defer_steps)  # fmt: skip
        assert (m._graphed is not None) == (graphs == "1")
        assert bool(m.deferred) == (defer_steps > 1)
        losses, tests = [], []
        for k in range(14):
            if k == 8:
                tests.append(m.outputs_test().cpu())
            losses.append(torch.nn.functional.softplus(-m.y * m.step()[0]).mean(1).cpu())
        assert (len(m._graphed.graphs) if m._graphed else 0) == (max(defer_steps, 1) if graphs == "1" else 0)
        tests.append(m.outputs_test().cpu())
        return torch.stack(losses), torch.stack(tests), m.state()

    graph_losses, graph_tests, graph_state = run("1")
    eager_losses, eager_tests, eager_state = run("0")
    torch.testing.assert_close(graph_losses, eager_losses, rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(graph_tests, eager_tests, rtol=1e-6, atol=1e-7)
    for k in eager_state:
        torch.testing.assert_close(graph_state[k], eager_state[k], rtol=1e-5, atol=1e-6, msg=k)


def test_encoder_on_cuda_with_deferred_updates_matches_cpu_float64(monkeypatch):
    """Updates deferred by 4 steps on CUDA (opt-in: BENIGN_CUDA_DEFER_STEPS) against the CPU
    in float64."""
    monkeypatch.setenv("BENIGN_CUDA_DEFER_STEPS", "4")
    specs = [
        RunSpec(model="encoder", d=96, mlp_dim=64, signal_norm=m, steps=40, n_test=200, log_every=10)
        for m in (5.0, 20.0)
    ]
    compare(*both(specs), rtol=1e-4, atol=1e-5)
