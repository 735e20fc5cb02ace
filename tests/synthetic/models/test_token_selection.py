"""The reduced-space token-selection trainer against a dense float64 autograd reference."""

import pytest
import torch
import torch.nn.functional as F

from benign.synthetic import data_model as synthetic
from benign.synthetic import models
from benign.synthetic.models.token_selection import init_W
from tests.helpers.reference_models import token_model_dense


def _batch(norms, etas, rhos=None, lrs=None, **kw):
    params = dict(n=10, T=4, d=30, sigma=1.0, n_test=20, seed=3)
    params.update(kw)
    B = len(norms)
    return models.build(
        "token",
        **params,
        signal_norms=norms,
        rhos=rhos or [0.1] * B,
        etas=etas,
        lrs=lrs or [0.05] * B,
        dtype=torch.float64,
    )


def test_matches_dense_reference_losses_and_parameters():
    steps, lr = 40, 0.05
    model = _batch([5.0, 7.0], [0.2, 0.0])
    cfg = synthetic.DataSpec(n=10, T=4, d=30, n_test=20, signal_norm=5.0, eta=0.2, seed=3)
    history, W_ref, p_ref = token_model_dense(synthetic.generate(cfg), init_W(30, 3), lr, steps)
    for k in range(steps + 1):
        f, att = model.outputs_train()
        loss = F.softplus(-model.y[0] * f[0]).mean().item()
        test_loss = F.softplus(-model.y_test * model.outputs_test()[0]).mean().item()
        ref_loss, ref_test, ref_att = history[k]
        assert abs(loss - ref_loss) <= 1e-6 * abs(ref_loss)
        assert abs(test_loss - ref_test) <= 1e-6 * abs(ref_test)
        assert torch.allclose(att[0], ref_att, rtol=1e-6, atol=1e-12)
        if k < steps:
            model.step()
    W, p = model.parameters(0)
    assert torch.allclose(W, W_ref, rtol=1e-6, atol=1e-12)
    assert torch.allclose(p, p_ref, rtol=1e-6, atol=1e-12)
    assert p.abs().max() > 1e-3  # the check is not vacuous: p moved away from 0


def test_softmax_rows_sum_to_one():
    model = _batch([5.0], [0.2])
    for _ in range(5):
        model.step()
    _, att = model.outputs_train()
    assert torch.allclose(att.sum(-1), torch.ones_like(att.sum(-1)))


def test_batched_equals_one_by_one():
    norms, etas, rhos, lrs = [2.0, 5.0, 9.0], [0.2, 0.0, 0.4], [0.1, 0.3, 0.2], [0.05, 0.1, 0.02]
    together = _batch(norms, etas, rhos, lrs)
    alone = [_batch([m], [e], [r], [lr]) for m, e, r, lr in zip(norms, etas, rhos, lrs)]
    for _ in range(15):
        together.step()
        for a in alone:
            a.step()
    f, att = together.outputs_train()
    ft = together.outputs_test()
    for b, a in enumerate(alone):
        fa, atta = a.outputs_train()
        assert torch.allclose(f[b], fa[0], rtol=1e-10, atol=1e-13)
        assert torch.allclose(att[b], atta[0], rtol=1e-10, atol=1e-13)
        assert torch.allclose(ft[b], a.outputs_test()[0], rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize(("d", "n", "steps"), [(100000, 20, 100000), (1000, 10, 1000000)])
def test_w_correction_in_float32_keeps_every_label_of_a_flow_line(d, n, steps):
    """A in float32 (``w_dtype``, the atlas's setting) against float64 on lines of the atlas's
    kind (Gram engine, the flow at step size 5, 8 norms across its transitions), the second where
    W's share of the logits is largest (d 10^3, to 10^6 steps): the flow takes the same steps,
    every logged accuracy, selection rate and hard-max error is identical, and the losses agree to
    1e-7 relative (rounding in A alone; benchmarks/bench_gram.py's w_dtype checks whole atlas lines)."""
    from benign.synthetic.trainer import RunSpec, train_runs

    line = dict(model="token", engine="gram", d=d, n=n, step_size=5.0, integrator="flow", steps=steps, log_points=21,
                seed=4)  # fmt: skip
    norms = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0]
    got = {}
    for w in ("float64", "float32"):
        runs, curves, _ = train_runs([RunSpec(**line, signal_norm=m, w_dtype=w) for m in norms])
        order = {r: i for i, r in enumerate(dict.fromkeys(runs["run_id"]))}
        got[w] = (
            runs["iterations"].tolist(),
            curves.assign(run=curves["run_id"].map(order)).set_index(["run", "step"]).sort_index(),
        )
    (it64, a), (it32, b) = got["float64"], got["float32"]
    assert it64 == it32 and a.index.equals(b.index)
    for label in ("train_acc", "test_acc", "train_acc_noisy", "test_sel_relevant", "test_err_hardmax",
                  "train_noisy_sel_relevant", "train_clean_sel_relevant"):  # fmt: skip
        assert (a[label] == b[label]).all(), label
    for loss in ("train_loss", "test_loss"):
        assert ((a[loss] - b[loss]).abs() <= 1e-7 * a[loss].abs()).all(), loss
    assert (a["train_loss"] != b["train_loss"]).any()  # A was float32 indeed
