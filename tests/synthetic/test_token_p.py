"""The token-selection model with W fixed and p trained (W = W0, W = I) against a dense float64
autograd loop in which W is frozen: the reduced space's program with E = 0 must follow it."""

import pytest
import torch
import torch.nn.functional as F

from benign.synthetic import data_model as synthetic
from benign.synthetic import models
from benign.synthetic.models.token_selection import init_W

N, T, D, N_TEST, SEED, LR, STEPS = 10, 4, 30, 20, 3, 0.05, 40


@pytest.mark.parametrize(
    "name, W0",
    [("token_p_w0", lambda: init_W(D, SEED)), ("token_p_identity", lambda: torch.eye(D, dtype=torch.float64))],
)
def test_p_only_matches_dense_autograd_with_W_frozen(name, W0):
    model = models.build(name, n=N, T=T, d=D, sigma=1.0, n_test=N_TEST, seed=SEED, signal_norms=[5.0, 9.0],
                         rhos=[0.1, 0.1], etas=[0.2, 0.2], lrs=[LR, LR])  # fmt: skip
    data = synthetic.generate(synthetic.DataSpec(n=N, T=T, d=D, n_test=N_TEST, signal_norm=5.0, eta=0.2, seed=SEED))
    W = W0()
    p = torch.zeros(D, dtype=torch.float64, requires_grad=True)

    def f(X):
        return (torch.softmax(X @ (W @ p), -1) * (X @ data.nu)).sum(-1)

    for step in range(STEPS):
        loss_ref = F.softplus(-data.y_train * f(data.X_train)).mean()
        with torch.no_grad():
            test_ref = F.softplus(-data.y_test * f(data.X_test)).mean().item()
        test = F.softplus(-model.y_test * model.outputs_test()[0]).mean().item()
        out, _ = model.step()
        loss = F.softplus(-model.y[0] * out[0]).mean().item()
        assert loss == pytest.approx(loss_ref.item(), rel=1e-6), step
        assert test == pytest.approx(test_ref, rel=1e-6), step
        (g,) = torch.autograd.grad(loss_ref, [p])
        with torch.no_grad():
            p -= LR * g
    W_ours, p_ours = model.parameters(0)
    assert torch.equal(W_ours, W)  # W never moves
    assert torch.allclose(p_ours, p.detach(), rtol=1e-6, atol=1e-12)
    assert p.detach().norm() > 1e-2  # p moved: the check covers training


@pytest.mark.parametrize("name", ["token_p_w0", "token"])
def test_what_the_svm_check_reads_matches_the_explicit_parameters(name):
    """Batch.scores, key_gram and query_norm (reduced space) against W, p materialised."""
    model = models.build(name, n=N, T=T, d=D, sigma=1.0, n_test=N_TEST, seed=SEED, signal_norms=[5.0, 9.0],
                         rhos=[0.1, 0.1], etas=[0.2, 0.2], lrs=[LR, LR])  # fmt: skip
    for _ in range(25):
        model.step()
    for b in range(2):
        W, p = model.parameters(b)
        X = model.E.clone()
        X[:, :2] += model.Mc[b]
        torch.testing.assert_close(model.scores()[b].reshape(-1), X @ W @ p, rtol=1e-10, atol=1e-12)
        K = X @ model.W0
        torch.testing.assert_close(model.key_gram("init")[b], K @ K.T, rtol=1e-10, atol=1e-10)
        torch.testing.assert_close(model.key_gram("raw")[b], X @ X.T, rtol=1e-10, atol=1e-10)
        assert model.query_norm()[b].item() == pytest.approx((W @ p).norm().item(), rel=1e-9)
    assert (model.query_norm() > 0).all()
    with pytest.raises(ValueError, match="keys must be"):
        model.key_gram("trained")
