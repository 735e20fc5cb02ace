"""A batch's data (benign.synthetic.models.batch_data): the runs of one batch share one noise
draw and differ only in their signal, written out here token by token from the data model's
description (docs/data.md), and each run's set is the one drawn for it alone."""

import torch

from benign.synthetic import data_model
from benign.synthetic.models.batch_data import batch_data
from benign.synthetic.spec import DataSpec

N, T, D, SEED = 6, 4, 5, 3
NORMS, RHOS, ETAS = [2.0, 8.0], [0.1, 0.5], [0.0, 1 / 3]


def test_the_runs_share_the_noise_and_carry_their_own_signal_on_e1_and_e2():
    batch = batch_data(n=N, T=T, d=D, sigma=1.0, n_test=7, seed=SEED, signal_norms=NORMS, rhos=RHOS, etas=ETAS)
    assert (batch.B, batch.d, batch.engine) == (2, D, "explicit")
    tokens = batch.tokens()  # (B, n, T, d)
    signal = tokens - batch.noise  # the same noise under every run
    assert torch.equal(signal[..., 2:], torch.zeros_like(signal[..., 2:]))  # signal in e_1, e_2 only
    for b, (m, rho) in enumerate(zip(NORMS, RHOS)):
        for i, y in enumerate(batch.y_true.tolist()):
            mu_pos, mu_neg = torch.tensor([m, 0.0], dtype=torch.float64), torch.tensor([0.0, m], dtype=torch.float64)
            own, other = (mu_pos, mu_neg) if y > 0 else (mu_neg, mu_pos)
            assert torch.allclose(signal[b, i, 0, :2], own)  # token 0: mu_y
            assert torch.allclose(signal[b, i, 1, :2], rho * own)  # token 1: rho mu_y
            assert torch.allclose(signal[b, i, 2, :2], rho * other)  # token 2: rho mu_{-y}
            assert torch.equal(signal[b, i, 3], torch.zeros(D, dtype=torch.float64))  # token 3: noise alone
    # eta 0 flips nothing; eta 1/3 flips 2 of 6, one per class; the labels trained on are the flipped ones
    assert batch.noisy[0].sum() == 0 and batch.noisy[1].sum() == 2
    assert batch.y_true[batch.noisy[1]].tolist() in ([1.0, -1.0], [-1.0, 1.0])
    assert torch.equal(batch.y[1], torch.where(batch.noisy[1], -batch.y_true, batch.y_true))


def test_each_run_is_its_own_draw():
    batch = batch_data(n=N, T=T, d=D, sigma=1.0, n_test=7, seed=SEED, signal_norms=NORMS, rhos=RHOS, etas=ETAS)
    for b, (m, rho, eta) in enumerate(zip(NORMS, RHOS, ETAS)):
        alone = data_model.generate(
            DataSpec(n=N, T=T, d=D, rho=rho, eta=eta, sigma=1.0, signal_norm=m, n_test=7, seed=SEED)
        )
        assert torch.equal(batch.tokens()[b], alone.X_train)
        assert torch.equal(batch.y[b], alone.y_train) and torch.equal(batch.y_test, alone.y_test)
        assert torch.equal(data_model.add_signal(batch.noise_test, batch.coef_test[b]), alone.X_test)
