"""The data of a batch of synthetic runs, built once for every model (docs/data.md).

Runs in one batch share the token noise, the labels and the initialisation seed (same n, T, d,
sigma, n_test, seed) and differ in signal norm, rho and eta. Their tokens are noise plus a
signal in the first two coordinates only, so a run is the shared noise and its own (n, T, 2)
signal coefficients. The noise is d-dimensional (engine ``explicit``) or given in the
2(nT + 2) coordinates of the Gram engine (``gram``, benign.synthetic.gram), whose first two are
e_1 and e_2 as well.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from benign.synthetic import data_model as synthetic
from benign.synthetic import gram


@dataclass
class BatchData:
    """B runs' training and test sets, float64 on the CPU."""

    noise: torch.Tensor  # (n, T, d) training-token noise, shared (d: 2(nT + 2) with the Gram engine)
    noise_test: torch.Tensor  # (n_test, T, d) test-token noise, shared
    y_true: torch.Tensor  # (n,) true training labels
    y_test: torch.Tensor  # (n_test,) clean test labels
    noisy: torch.Tensor  # (B, n) bool: the label trained on is flipped
    coef: torch.Tensor  # (B, n, T, 2) every training token's signal on (e_1, e_2)
    coef_test: torch.Tensor  # (B, n_test, T, 2)
    signal_norms: torch.Tensor  # (B,)
    d: int  # the token dimension of the model (the noise's last axis unless the engine is gram)
    engine: str = "explicit"

    @property
    def B(self) -> int:
        return self.noisy.shape[0]

    @property
    def y(self) -> torch.Tensor:
        """(B, n) the labels trained on."""
        return torch.where(self.noisy, -self.y_true, self.y_true)

    def tokens(self) -> torch.Tensor:
        """(B, n, T, d) the training tokens of every run."""
        return torch.stack([synthetic.add_signal(self.noise, c) for c in self.coef])


def batch_data(
    *, n: int, T: int, d: int, sigma: float, n_test: int, seed: int, signal_norms, rhos, etas, engine: str = "explicit"
) -> BatchData:
    """The data of the runs (signal_norms[b], rhos[b], etas[b]) on one shared noise draw."""
    draw = {"explicit": synthetic.noise, "gram": gram.noise}[engine]
    noise, noise_test = draw(n, T, d, sigma, n_test, seed)
    y_true, y_test = synthetic.balanced_labels(n), synthetic.balanced_labels(n_test)
    pairs = list(zip(rhos, signal_norms))
    return BatchData(
        noise=noise,
        noise_test=noise_test,
        y_true=y_true,
        y_test=y_test,
        noisy=torch.stack([synthetic.flip_mask(n, float(eta), seed) for eta in etas]),
        coef=torch.stack([synthetic.signal_coefficients(y_true, T, r, m) for r, m in pairs]),
        coef_test=torch.stack([synthetic.signal_coefficients(y_test, T, r, m) for r, m in pairs]),
        signal_norms=torch.tensor([float(m) for m in signal_norms], dtype=torch.float64),
        d=d,
        engine=engine,
    )
