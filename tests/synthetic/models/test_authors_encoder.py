"""benign.synthetic.models.encoder against the authors' OneLayerEncoder (tests/helpers/authors_encoder.py): the same
initial parameters loaded into both, the same data, 20 steps of full-batch SGD (lr 5e-3) on the
logistic loss. Losses and the [CLS] row's attention must agree at every step."""

from __future__ import annotations

import pytest
import torch

from benign.synthetic import models
from benign.synthetic.models.encoder import init_params
from tests.helpers.authors_encoder import OneLayerEncoder, load

STEPS, LR = 20, 5e-3


@pytest.mark.parametrize("dtype, tol", [(torch.float64, 1e-10), (torch.float32, 1e-5)])
def test_training_matches_the_authors_encoder(dtype, tol):
    d, mlp_dim = 64, 48
    ours = models.build("encoder", n=20, T=8, d=d, sigma=1.0, n_test=10, seed=42, mlp_dim=mlp_dim, signal_norms=[3.0],
                        rhos=[0.1], etas=[0.2], lrs=[LR], dtype=dtype)  # fmt: skip
    torch.manual_seed(0)
    theirs = OneLayerEncoder(d, mlp_dim).to(dtype)
    load(theirs, ours.parameters(0))
    opt = torch.optim.SGD(theirs.parameters(), lr=LR)
    X, y = ours.X[0], ours.y[0]
    moved = 0.0
    for step in range(STEPS):
        f, att = ours.step()
        f_ref, att_ref = theirs.forward_with_scores(X)
        loss_ref = torch.log(1.0 + torch.exp(-y * f_ref)).mean()  # their loss, as written
        loss = torch.nn.functional.softplus(-y * f[0]).mean()
        assert loss.item() == pytest.approx(loss_ref.item(), rel=tol, abs=tol), step
        assert torch.allclose(att[0, :, 1:], att_ref.detach(), rtol=tol, atol=tol), step
        moved = max(moved, (att_ref.detach() - att_ref.detach().mean(-1, keepdim=True)).abs().max().item())
        opt.zero_grad()
        loss_ref.backward()
        opt.step()
    assert moved > 1e-3  # the attention is not uniform: the check covers real token selection


def test_cls_starts_at_a_seeded_standard_normal():
    a, b, c = (init_params(500, 20, seed)["cls"] for seed in (1, 1, 2))
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert abs(a.mean().item()) < 0.2 and a.std().item() == pytest.approx(1.0, abs=0.1)
