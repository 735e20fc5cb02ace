"""The token model's data and initialisation in a space of dimension 2(N + 2), exact in law
for any d (docs/model.md#the-gram-engine).

The token-selection model only ever needs inner products: of the N = nT training tokens with
each other and with e_1, e_2 (S), the same through W0 W0^T (G), and of the test tokens with the
query q = W p, which stays in span(e_1, e_2, the tokens, W0 W0^T of them). So the runs can be
carried in coordinates of an orthonormal basis of that span, whose joint law does not depend
on how d is reached. With W0 Gaussian, entries N(0, 1/(3d)) (the variance of the paper's
uniform W0):

- the tokens' noise beyond e_1, e_2, in the basis Phi that Gram-Schmidt makes of (e_1, e_2,
  tokens): a lower-triangular Bartlett factor, chi variates with d - 2 - i degrees of freedom
  on the diagonal and normals below;
- W0^T Phi is a d x m Gaussian matrix (m = N + 2): W0^T Phi = Psi M, M the upper-triangular
  Bartlett factor with d - i degrees of freedom;
- W0 Psi = Phi M^T + Xi H: its part outside span(Phi) is, given everything before, an
  independent Gaussian matrix in the (d - m)-dimensional complement, H the Bartlett factor
  with d - m - i degrees of freedom, Xi m new basis vectors.

In the basis (Phi, Xi), W0 acts on what the model needs as the 2m x m matrix [M^T; H] (from Psi
coordinates), so ``benign.synthetic.models.token_selection.Batch`` runs unchanged on these
coordinates. A test token's noise is isotropic and independent of training: its coordinates
on the 2m basis vectors are i.i.d. normal, and its part outside the span never meets q. A
fixed test set drawn in these coordinates is therefore a fixed test set of the d-dimensional
model, evaluated along the whole trajectory. Nothing here has size d.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from benign.core.rng import derived_seed
from benign.synthetic.engines import gram_min_d


def dimension(n: int, T: int) -> int:
    """2m, m = nT + 2: the dimension the Gram engine works in, and the least d it allows."""
    return gram_min_d(n, T)


def _rng(seed: int, stream: str, d: int, n: int, T: int) -> np.random.Generator:
    """The generator of one stream of one line: (seed, d, n, T) together name the draw, so the
    lines of one seed at different d or n are independent (their crossings are independent
    units: docs/regimes.md#crossings); the runs along one line, which differ in ||mu||, rho,
    eta or lr only, share it."""
    return np.random.default_rng(derived_seed(seed, f"{stream}/d{d}/n{n}/T{T}"))


def bartlett_upper(m: int, dof: int, rng: np.random.Generator) -> np.ndarray:
    """R (m x m, upper triangular, positive diagonal) of the QR factorisation of a dof x m matrix
    of i.i.d. N(0, 1): R_ii ~ chi(dof - i), R_ij ~ N(0, 1) above the diagonal, all independent."""
    if dof < m:
        raise ValueError(f"a Bartlett factor of size {m} needs at least {m} degrees of freedom, got {dof}")
    R = np.triu(rng.standard_normal((m, m)), k=1)
    R[np.diag_indices(m)] = np.sqrt(rng.chisquare(dof - np.arange(m)))
    return R


def noise(n: int, T: int, d: int, sigma: float, n_test: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Token noise of the training set (n, T, 2m) and of the test set (n_test, T, 2m) in the
    coordinates of the module docstring: coordinates 0 and 1 are e_1 and e_2, the training
    noise has no part on the last m."""
    N, D = n * T, dimension(n, T)
    if d < D:
        raise ValueError(f"the Gram engine needs d >= 2(nT + 2) = {D} (n = {n}, T = {T}), got d = {d}")
    rng = _rng(seed, "gram_noise", d, n, T)
    train = np.zeros((N, D))
    train[:, :2] = rng.standard_normal((N, 2))
    train[:, 2 : N + 2] = bartlett_upper(N, d - 2, rng).T  # lower triangular: token i spans phi_3..phi_{i+3}
    test = _rng(seed, "gram_noise_test", d, n, T).standard_normal((n_test * T, D))
    as_tensor = lambda a, rows: torch.from_numpy(sigma * a).reshape(rows, T, D)  # noqa: E731
    return as_tensor(train, n), as_tensor(test, n_test)


def init_W(d: int, n: int, T: int, seed: int) -> torch.Tensor:
    """W0 as it acts on the span, (2m, m): [M^T; H] (module docstring), entries scaled by the
    standard deviation 1/sqrt(3d) of the paper's uniform W0."""
    m = n * T + 2
    rng = _rng(seed, "gram_init", d, n, T)
    M = bartlett_upper(m, d, rng)
    H = bartlett_upper(m, d - m, rng)
    return torch.from_numpy(np.vstack([M.T, H]) / math.sqrt(3 * d))
