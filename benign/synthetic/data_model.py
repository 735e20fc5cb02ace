"""The synthetic data model (docs/data.md).

Two orthogonal class signals mu_{+1} = ||mu|| e_1 and mu_{-1} = ||mu|| e_2. For a sample
with true label y*, token 0 is mu_{y*} + eps, token 1 is rho mu_{y*} + eps, token 2 is
rho mu_{-y*} + eps and tokens 3..T-1 are pure noise eps ~ N(0, sigma^2 I_d).

Tokens are stored as ``noise + signal`` where the signal lives in the first two
coordinates only. The noise depends on (n, T, d, n_test, sigma, seed) alone, so runs that
differ only in signal norm, rho or eta share it (common random numbers across a sweep);
the fast trainer exploits this.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from benign.core.rng import generator
from benign.synthetic.label_noise import flip_balanced
from benign.synthetic.spec import DataSpec


def balanced_labels(n: int) -> torch.Tensor:
    """+1 for the first half, -1 for the second."""
    return torch.cat([torch.ones(n // 2), -torch.ones(n - n // 2)]).double()


def signal_coefficients(y: torch.Tensor, T: int, rho: float, signal_norm: float) -> torch.Tensor:
    """Coefficients (n, T, 2) of every token on (e_1, e_2): mu_{+1} = ||mu|| e_1, mu_{-1} = ||mu|| e_2."""
    own = torch.stack([(y > 0).double(), (y < 0).double()], dim=-1)  # one-hot of mu_y on (e1, e2)
    coef = torch.zeros(y.numel(), T, 2, dtype=torch.float64)
    coef[:, 0] = signal_norm * own
    coef[:, 1] = rho * signal_norm * own
    coef[:, 2] = rho * signal_norm * own.flip(-1)
    return coef


def noise(n: int, T: int, d: int, sigma: float, n_test: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Token noise (float64) of the training set (n, T, d) and the independent test set (n_test, T, d)."""
    g = generator(seed, "noise")
    train = torch.randn(n, T, d, generator=g, dtype=torch.float64) * sigma
    test = torch.randn(n_test, T, d, generator=g, dtype=torch.float64) * sigma
    return train, test


def flip_mask(n: int, eta: float, seed: int) -> torch.Tensor:
    """Which training labels are flipped (docs/data.md#label-noise: exactly ceil(eta n), half per class)."""
    return flip_balanced(balanced_labels(n), eta, generator(seed, "flips"))


def head_vector(d: int, signal_norm: float) -> torch.Tensor:
    """nu = (mu_{+1} - mu_{-1}) / ||mu_{+1} - mu_{-1}|| / ||mu|| (the fixed head)."""
    nu = torch.zeros(d, dtype=torch.float64)
    nu[0], nu[1] = 1.0, -1.0
    return nu / math.sqrt(2) / signal_norm


def class_signals(d: int, signal_norm: float) -> tuple[torch.Tensor, torch.Tensor]:
    mu_pos = torch.zeros(d, dtype=torch.float64)
    mu_neg = torch.zeros(d, dtype=torch.float64)
    mu_pos[0] = signal_norm
    mu_neg[1] = signal_norm
    return mu_pos, mu_neg


@dataclass
class SyntheticData:
    """A dense materialisation of one data set (float64)."""

    config: DataSpec
    X_train: torch.Tensor  # (n, T, d)
    y_train: torch.Tensor  # (n,) labels trained on (noisy), +1/-1
    y_true: torch.Tensor  # (n,) true labels
    noisy: torch.Tensor  # (n,) bool, label flipped
    X_test: torch.Tensor  # (n_test, T, d)
    y_test: torch.Tensor  # (n_test,) clean labels
    nu: torch.Tensor  # (d,) fixed head


def add_signal(noise_tokens: torch.Tensor, coef: torch.Tensor) -> torch.Tensor:
    X = noise_tokens.clone()
    X[..., :2] += coef.to(X)
    return X


def generate(cfg: DataSpec) -> SyntheticData:
    """Draw one training set (with label noise) and an independent clean test set."""
    e_train, e_test = noise(cfg.n, cfg.T, cfg.d, cfg.sigma, cfg.n_test, cfg.seed)
    y_true = balanced_labels(cfg.n)
    y_test = balanced_labels(cfg.n_test)
    noisy = flip_mask(cfg.n, cfg.eta, cfg.seed)
    y_train = torch.where(noisy, -y_true, y_true)
    X_train = add_signal(e_train, signal_coefficients(y_true, cfg.T, cfg.rho, cfg.signal_norm))
    X_test = add_signal(e_test, signal_coefficients(y_test, cfg.T, cfg.rho, cfg.signal_norm))
    return SyntheticData(cfg, X_train, y_train, y_true, noisy, X_test, y_test, head_vector(cfg.d, cfg.signal_norm))
