"""The [CLS]-only batched encoder against the textbook full-sequence encoder (float64)."""

import pytest
import torch
import torch.nn.functional as F

from benign.synthetic import models
from benign.synthetic.speed import settings
from tests.helpers.reference_models import encoder_dense


def _batch(norms, etas, lrs=None, defer_rows=None, defer_steps=None):
    B = len(norms)
    return models.build(
        "encoder", n=6, T=4, d=12, sigma=1.0, n_test=8, seed=1, mlp_dim=10, signal_norms=norms, rhos=[0.1] * B, etas=etas,
        lrs=lrs or [0.1] * B, dtype=torch.float64, defer_rows=defer_rows, defer_steps=defer_steps,
    )  # fmt: skip


# Updates applied at once (0), deferred with the default capacity (None: W_q and W_k never fold
# in 10 steps, the others fold once), with a small one (13: folds every 2 steps), and by whole
# steps, every matrix folding together (as on CUDA: every 3 steps).
@pytest.mark.parametrize("defer", [{"defer_rows": 0}, {}, {"defer_rows": 13}, {"defer_steps": 3}])
def test_training_matches_full_encoder_with_autograd(defer):
    model = _batch([3.0, 5.0], [0.2, 0.0], **defer)
    assert bool(model.deferred) == (defer.get("defer_rows") != 0)
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


def test_checkpoint_keeps_pending_updates():
    """A state saved with updates still pending, loaded into a fresh batch, continues exactly
    like the batch it came from, and saving it changes nothing."""
    model = _batch([3.0, 5.0], [0.2, 0.4], defer_rows=13)
    for _ in range(3):
        model.step()
    assert any(dm.r for dm in model.deferred.values())
    state = model.state()
    copy = _batch([3.0, 5.0], [0.2, 0.4], defer_rows=13)
    copy.load_state(state)
    for _ in range(4):
        f1, _ = model.step()
        f2, _ = copy.step()
        assert torch.equal(f1, f2)
    for k, v in model.parameters(0).items():
        assert torch.equal(v, copy.parameters(0)[k]), k


def test_deferred_bookkeeping():
    """Pending rows never exceed the capacity; a fold empties them; outputs fold first."""
    model = _batch([3.0], [0.2], defer_rows=13)
    caps = {name: dm.X.shape[1] for name, dm in model.deferred.items()}
    assert caps == {"Wq": 13, "Wk": 13, "Wv": 12, "W1": 12, "W2": 12}
    for _ in range(5):
        model.step()
        assert all(dm.r <= caps[name] for name, dm in model.deferred.items())
    assert model.deferred["Wq"].r == 5 and model.deferred["Wv"].r == 6  # folded after steps 2 and 4
    model.outputs_train()
    assert all(dm.r == 0 for dm in model.deferred.values())


def test_deferral_by_steps_folds_every_matrix_together():
    """defer_steps=3: each matrix holds 3 steps' rows (1 per step for W_q and W_k, n for the
    others) and all fold on the third step, so the pending state cycles through 3 values (the
    steps a CUDA graph is captured for). An evaluation folds early and the cycle restarts."""
    model = _batch([3.0], [0.2], defer_steps=3)
    caps = {name: dm.X.shape[1] for name, dm in model.deferred.items()}
    assert caps == {"Wq": 3, "Wk": 3, "Wv": 18, "W1": 18, "W2": 18}
    rows = {"Wq": 1, "Wk": 1, "Wv": 6, "W1": 6, "W2": 6}
    seen = []
    for k in range(7):
        model.step()
        seen.append(model._pending_state())
        assert all(dm.r == ((k + 1) % 3) * rows[name] for name, dm in model.deferred.items()), k
    assert len(set(seen)) == 3
    model.outputs_test()
    assert model._pending_state() == (0,) * 5
    assert _batch([3.0], [0.2], defer_steps=1).deferred == {}  # one step: nothing to defer


def test_deferral_is_by_rows_or_by_steps_not_both():
    with pytest.raises(ValueError, match="not both"):
        _batch([3.0], [0.2], defer_rows=8, defer_steps=2)


def test_resume_into_smaller_deferral_applies_what_does_not_fit():
    """Pending rows saved with more room than the resuming batch has (W_q: 3 rows, room for 2)
    are applied, the others kept pending: the runs continue alike (float64, to rounding)."""
    model = _batch([3.0], [0.2], defer_rows=13)
    for _ in range(3):
        model.step()
    resumed = _batch([3.0], [0.2], defer_steps=2)
    resumed.load_state(model.state())
    assert resumed.deferred["Wq"].r == 0 and resumed.deferred["Wv"].r == 6  # 3 rows into 2: applied; 6 into 12
    for _ in range(5):
        f1, _ = model.step()
        f2, _ = resumed.step()
        assert torch.allclose(f1, f2, rtol=1e-12, atol=1e-14)


def test_pending_updates_survive_a_resume_without_deferral():
    """A state saved with pending updates (CPU) and resumed where updates are applied at once
    (as on CUDA) applies them: the runs continue alike (float64, to rounding)."""
    model = _batch([3.0], [0.2], defer_rows=13)
    for _ in range(3):
        model.step()
    assert any(dm.r for dm in model.deferred.values())
    plain = _batch([3.0], [0.2], defer_rows=0)
    plain.load_state(model.state())
    for _ in range(3):
        f1, _ = model.step()
        f2, _ = plain.step()
        assert torch.allclose(f1, f2, rtol=1e-12, atol=1e-14)


def test_test_outputs_alike_with_the_test_tokens_kept_or_formed_per_pass(monkeypatch):
    """Small test sets keep their normalised tokens; large ones form them per pass (of 3 samples
    here): the test outputs are the same, and equal the dense encoder's."""
    kept = _batch([3.0, 5.0], [0.2, 0.0])
    assert kept.Xn_test is not None
    monkeypatch.setattr(settings, "TEST_CACHE_FLOATS", 0)
    formed = models.build(
        "encoder", n=6, T=4, d=12, sigma=1.0, n_test=8, seed=1, mlp_dim=10, signal_norms=[3.0, 5.0], rhos=[0.1] * 2,
        etas=[0.2, 0.0], lrs=[0.1] * 2, dtype=torch.float64, test_chunk=3,
    )  # fmt: skip
    assert formed.Xn_test is None
    for _ in range(3):
        kept.step(), formed.step()
    assert torch.allclose(kept.outputs_test(), formed.outputs_test(), rtol=1e-12, atol=1e-14)
    Xt = formed.Et.clone()
    Xt[..., :2] += formed.Mt[0]
    assert torch.allclose(formed.outputs_test()[0], encoder_dense(formed.parameters(0), Xt)[0], rtol=1e-9, atol=1e-12)
