"""Plain, obviously correct reference implementations (dense, autograd, float64), used by tests."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from benign.synthetic import data_model as synthetic


def token_model_dense(data: synthetic.SyntheticData, W0: torch.Tensor, lr: float, steps: int):
    """Full-batch GD on the token-selection model with an explicit d x d W and autograd.

    Returns per-step (train loss, test loss) before each update, and the final (W, p).
    """
    X, y, Xt, yt, nu = data.X_train, data.y_train, data.X_test, data.y_test, data.nu
    W = W0.clone().requires_grad_(True)
    p = torch.zeros(W0.shape[0], dtype=torch.float64, requires_grad=True)

    def f(tokens):
        att = torch.softmax(tokens @ (W @ p), dim=-1)
        return (att * (tokens @ nu)).sum(-1), att

    history = []
    for _ in range(steps + 1):
        out, att = f(X)
        loss = F.softplus(-y * out).mean()
        with torch.no_grad():
            test_loss = F.softplus(-yt * f(Xt)[0]).mean()
        history.append((loss.item(), test_loss.item(), att.detach()))
        if len(history) > steps:
            break
        gW, gp = torch.autograd.grad(loss, [W, p])
        with torch.no_grad():
            W -= lr * gW
            p -= lr * gp
    return history, W.detach(), p.detach()


def encoder_dense(params: dict, X: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The one-layer encoder over ALL positions, written the textbook way (docs/model.md#one-layer-encoder).

    ``params`` holds one run's tensors (no batch dimension); matrices act as x @ W.
    Returns (f (n,), attention of every position (n, T+1, T+1)).
    """
    n, T, d = X.shape
    h = torch.cat([params["cls"].expand(n, 1, d), X], dim=1)
    a = F.layer_norm(h, (d,), params["ln1_w"], params["ln1_b"])
    q, k, v = a @ params["Wq"], a @ params["Wk"], a @ params["Wv"]
    att = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(d), dim=-1)
    h = h + att @ v
    m = F.layer_norm(h, (d,), params["ln2_w"], params["ln2_b"])
    h = h + F.gelu(m @ params["W1"] + params["b1"]) @ params["W2"] + params["b2"]
    out = F.layer_norm(h, (d,), params["lnf_w"], params["lnf_b"])
    return out[:, 0] @ params["head_w"] + params["head_b"], att
