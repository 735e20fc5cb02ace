"""The attention-SVM of Tarzanagh, Li, Zhang and Oymak (NeurIPS 2023, "Max-Margin Token Selection in
Attention Mechanism"), solved from the keys' Gram matrix alone.

For f(X) = v^T X^T softmax(X W p) with keys k_t = W^T x_t, gradient descent on p alone converges in
direction to the max-margin separator of the (locally optimal) tokens it selects, a = (a_1, ..., a_n):

    p^mm = argmin ||p||  s.t.  (k_{i,a_i} - k_{i,t})^T p >= 1  for every i and t != a_i.

The trainer (benign.synthetic.models.token_selection) works in the span of the N = n T keys, p = K^T c, so the
problem is posed on c with only G = K K^T. Rows (i, t) of the difference operator D (m x N,
m = n (T - 1)) hold +1 at key (i, a_i) and -1 at key (i, t); the constraints read A p >= 1 with
A = D K, and H = A A^T = D G D^T.

This is a least-distance program, solved by Lawson and Hanson's reduction to non-negative least
squares (Solving Least Squares Problems, ch. 23): with R^T R = H,

    u = argmin_{u >= 0} || [R; 1^T] u - [0; 1] ||,    r_last = 1^T u - 1.

At the optimum r_last = -||r||^2, and p^mm = A^T u / (1 - 1^T u), so c_mm = D^T u / (1 - 1^T u); the
multipliers of min 1/2 ||p||^2 are alpha = u / (1 - 1^T u), with p^mm = A^T alpha and
||p^mm||^2 = 1^T alpha. A zero residual (1^T u = 1) is Farkas' certificate that no p separates the
selection: u >= 0 with A^T u = 0, 1^T u = 1.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.optimize

# Inseparable when 1 - 1^T u = 1 / (1 + s^2 ||p^mm||^2) falls below it, s the largest ||k_{i,a_i} - k_{i,t}||:
# a margin 1 / ||p^mm|| under 1e-6 s.
INFEASIBLE_TOL = 1e-12


def difference_operator(T: int, selected) -> np.ndarray:
    """D (n (T - 1) x n T): row (i, t), t != a_i in increasing t, is e_{(i, a_i)} - e_{(i, t)}."""
    a = np.asarray(selected, dtype=int)
    n = a.size
    if T < 2:
        raise ValueError(f"the attention-SVM needs T >= 2 tokens, got T={T}")
    if np.any((a < 0) | (a >= T)):
        raise ValueError(f"selected tokens must lie in [0, {T}), got {a.tolist()}")
    i, t = np.nonzero(np.arange(T)[None, :] != a[:, None])  # row-major: (i, t) for t != a_i
    D = np.zeros((n * (T - 1), n * T))
    rows = np.arange(i.size)
    D[rows, i * T + a[i]] = 1.0
    D[rows, i * T + t] = -1.0
    return D


def svm_direction_from_gram(G, T: int, selected) -> tuple[np.ndarray, np.ndarray]:
    """(c_mm (N,), alpha (n (T - 1),)): p^mm = K^T c_mm and the constraints' multipliers, from G = K K^T
    of the keys ordered sample-major (key (i, t) at i T + t). Raises ValueError if no p separates."""
    G = np.asarray(G, dtype=np.float64)
    D = difference_operator(T, selected)
    if G.shape != (D.shape[1], D.shape[1]):
        raise ValueError(f"G must be {D.shape[1]} x {D.shape[1]} (n T keys), got {G.shape}")
    H = D @ G @ D.T
    s2 = max(float(np.max(np.diag(H))), np.finfo(float).tiny)  # scale: p' = s p solves it for A / s
    lam, U = scipy.linalg.eigh(H / s2)
    R = np.sqrt(np.clip(lam, 0.0, None))[:, None] * U.T  # R^T R = H / s^2, negative rounding clipped
    m = H.shape[0]
    E = np.vstack([R, np.ones((1, m))])
    f = np.zeros(m + 1)
    f[-1] = 1.0
    u, _ = scipy.optimize.nnls(E, f, maxiter=50 * (m + 1))
    denom = 1.0 - u.sum()  # = -r_last = ||r||^2
    if denom <= INFEASIBLE_TOL:
        raise ValueError(_infeasible_message(u, T, selected))
    alpha = u / (s2 * denom)
    return D.T @ alpha, alpha


def _infeasible_message(u: np.ndarray, T: int, selected) -> str:
    a = np.asarray(selected, dtype=int)
    rows = np.nonzero(u > 1e-9 * u.max())[0]
    samples = sorted(set((rows // (T - 1)).tolist()))
    return (
        f"the selection is not separable: no p gives every selected token a margin over the other tokens "
        f"of its sample; samples {samples} (selected tokens {a[samples].tolist()}) carry the Farkas certificate"
    )


def margins_from_scores(scores, selected) -> np.ndarray:
    """Each sample's margin min_{t != a_i} (s_{i, a_i} - s_{i, t}), scores s = K p (n, T)."""
    s = np.asarray(scores, dtype=np.float64)
    a = np.asarray(selected, dtype=int)
    rows = np.arange(s.shape[0])
    others = s.copy()
    others[rows, a] = -np.inf
    return s[rows, a] - others.max(axis=1)


def selection(scores) -> np.ndarray:
    """The token each sample attends to most: argmax_t s_{i, t} (n,)."""
    return np.argmax(np.asarray(scores), axis=-1)


def locally_optimal(gamma: np.ndarray, a: np.ndarray, alpha: np.ndarray, T: int, tol: float = 1e-9) -> float:
    """The share of samples whose selected token meets Tarzanagh et al.'s local-optimality
    condition: its head score gamma = y <x, v> exceeds that of every support token (a token whose
    SVM constraint is active, alpha > 0)."""
    n = len(a)
    others = np.nonzero(np.arange(T)[None, :] != a[:, None])[1].reshape(n, T - 1)  # the rows of alpha, per sample
    support = alpha.reshape(n, T - 1) > tol * max(alpha.max(), np.finfo(float).tiny)
    selected = gamma[np.arange(n), a]
    ok = [bool(np.all(selected[i] > gamma[i, others[i][support[i]]])) for i in range(n)]
    return float(np.mean(ok))
