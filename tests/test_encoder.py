"""The [CLS]-only batched encoder against the textbook full-sequence encoder (float64)."""

import torch
import torch.nn.functional as F
from reference_models import encoder_dense

from benign.encoder import EncoderBatch


def _batch(norms, etas, lrs=None):
    B = len(norms)
    return EncoderBatch(
        n=6, T=4, d=12, sigma=1.0, n_test=8, seed=1, mlp_dim=10, signal_norms=norms, rhos=[0.1] * B, etas=etas,
        lrs=lrs or [0.1] * B, dtype=torch.float64,
    )  # fmt: skip


def test_training_matches_full_encoder_with_autograd():
    model = _batch([3.0, 5.0], [0.2, 0.0])
    ref = {k: v.clone().requires_grad_(True) for k, v in model.parameters(1).items()}
    X = model.X[1]
    for _ in range(10):
        f_ref, att_ref = encoder_dense(ref, X)
        f, att = model.step()
        assert torch.allclose(f[1], f_ref, rtol=1e-9, atol=1e-12)
        assert torch.allclose(att[1], att_ref[:, 0], rtol=1e-9, atol=1e-12)  # the [CLS] row
        loss = F.softplus(-model.y[1] * f_ref).mean()
        grads = torch.autograd.grad(loss, list(ref.values()))
        with torch.no_grad():
            for p, g in zip(ref.values(), grads):
                p -= 0.1 * g
    for name, value in model.parameters(1).items():
        assert torch.allclose(value, ref[name], rtol=1e-8, atol=1e-12), name
    # the [CLS] vector moved, so the check covers a non-uniform attention
    assert ref["cls"].abs().max() > 1e-4
    Xt = model.Et.clone()
    Xt[..., :2] += model.Mt[1]
    assert torch.allclose(model.outputs_test()[1], encoder_dense(model.parameters(1), Xt)[0], rtol=1e-9, atol=1e-12)


def test_attention_rows_sum_to_one_and_batched_equals_alone():
    together = _batch([3.0, 5.0], [0.2, 0.4], [0.1, 0.05])
    alone = [_batch([3.0], [0.2], [0.1]), _batch([5.0], [0.4], [0.05])]
    for _ in range(5):
        together.step()
        for a in alone:
            a.step()
    f, att = together.outputs_train()
    assert torch.allclose(att.sum(-1), torch.ones_like(att.sum(-1)))
    for b, a in enumerate(alone):
        assert torch.allclose(f[b], a.outputs_train()[0][0], rtol=1e-10, atol=1e-12)
