"""The synthetic data model (docs/data.md): token means, noise statistics, flips, determinism."""

import math

import pytest
import torch

from benign.plan import ConfigError
from benign.plan.validate import check_run
from benign.synthetic import data_model as synthetic
from benign.synthetic.label_noise import n_flips


def test_token_means_and_noise_statistics():
    cfg = synthetic.DataSpec(n=400, T=5, d=300, rho=0.3, signal_norm=7.0, eta=0.0, n_test=2, seed=3)
    data = synthetic.generate(cfg)
    X, y = data.X_train, data.y_true
    pos, neg = X[y > 0], X[y < 0]
    # token 0: mu_y, token 1: rho mu_y, token 2: rho mu_{-y}, others: 0; mu_+ = ||mu|| e1, mu_- = ||mu|| e2
    expected_pos = torch.zeros(5, 300, dtype=torch.float64)
    expected_pos[0, 0], expected_pos[1, 0], expected_pos[2, 1] = 7.0, 2.1, 2.1
    expected_neg = torch.zeros(5, 300, dtype=torch.float64)
    expected_neg[0, 1], expected_neg[1, 1], expected_neg[2, 0] = 7.0, 2.1, 2.1
    tol = 4 / math.sqrt(200)  # 4 standard errors of a mean over 200 samples
    assert (pos.mean(0) - expected_pos).abs().max() < tol
    assert (neg.mean(0) - expected_neg).abs().max() < tol
    noise = torch.cat([pos - expected_pos, neg - expected_neg])
    assert abs(noise.std().item() - 1.0) < 0.01
    # independent coordinates: the empirical correlation between two coordinates is small
    flat = noise.reshape(-1, 300)
    assert abs(torch.corrcoef(flat[:, 10:12].T)[0, 1].item()) < 0.03


def test_sigma_scales_noise():
    data = synthetic.generate(synthetic.DataSpec(n=50, d=400, sigma=2.5, n_test=2, signal_norm=1.0))
    assert abs(data.X_train[:, 3:, 2:].std().item() - 2.5) < 0.05


@pytest.mark.parametrize(
    "n,eta,flips", [(20, 0.2, 4), (20, 0.1, 2), (20, 0.15, 2), (30, 0.1, 2), (10, 0.05, 0), (100, 0.25, 24)]
)
def test_exact_flip_counts_half_per_class(n, eta, flips):
    # reference: floor(ceil(eta n) / 2) per class
    assert n_flips(n, eta) == 2 * (math.ceil(round(eta * n, 9)) // 2) == flips
    mask = synthetic.flip_mask(n, eta, seed=5)
    y = synthetic.balanced_labels(n)
    assert mask.sum() == flips
    assert mask[y > 0].sum() == mask[y < 0].sum() == flips // 2
    data = synthetic.generate(synthetic.DataSpec(n=n, eta=eta, d=10, n_test=2))
    assert torch.equal(data.y_train[data.noisy], -data.y_true[data.noisy])
    assert torch.equal(data.y_train[~data.noisy], data.y_true[~data.noisy])


def test_seed_determinism_and_independent_test_set():
    cfg = synthetic.DataSpec(n=20, d=50, n_test=20, seed=9)
    a, b = synthetic.generate(cfg), synthetic.generate(cfg)
    assert torch.equal(a.X_train, b.X_train) and torch.equal(a.X_test, b.X_test) and torch.equal(a.noisy, b.noisy)
    c = synthetic.generate(synthetic.DataSpec(n=20, d=50, n_test=20, seed=10))
    assert not torch.equal(a.X_train, c.X_train)
    # the test set is an independent draw: no test sample equals a training sample
    assert torch.cdist(a.X_test.reshape(20, -1), a.X_train.reshape(20, -1)).min() > 1.0
    assert (a.y_test == synthetic.balanced_labels(20)).all()


def test_noise_shared_across_signal_norms():
    a = synthetic.generate(synthetic.DataSpec(d=30, n_test=4, signal_norm=5.0, rho=0.2))
    b = synthetic.generate(synthetic.DataSpec(d=30, n_test=4, signal_norm=9.0, rho=0.1))
    assert torch.equal(a.X_train[..., 2:], b.X_train[..., 2:])


def test_head_vector():
    nu = synthetic.head_vector(10, 4.0)
    mu_pos, mu_neg = synthetic.class_signals(10, 4.0)
    assert torch.isclose(mu_pos @ nu, torch.tensor(1 / math.sqrt(2), dtype=torch.float64))
    assert torch.isclose(mu_neg @ nu, torch.tensor(-1 / math.sqrt(2), dtype=torch.float64))


@pytest.mark.parametrize(
    "kwargs,word",
    [({"T": 2}, "T"), ({"d": 1}, "d"), ({"n": 7}, "n"), ({"eta": 1.0}, "eta"), ({"signal_norm": 0.0}, "signal_norm"),
     ({"rho": -1.0}, "rho"), ({"n": 2.5}, "n")],
)  # fmt: skip
def test_bad_values_are_refused_by_name(kwargs, word):
    with pytest.raises(ConfigError, match=word):
        check_run({**synthetic.DataSpec().__dict__, "model": "token", "lr": 1.0, "steps": 1, **kwargs}, "run")
