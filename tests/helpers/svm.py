"""The attention-SVM direction in the tokens' own coordinates, for tests that build explicit keys:
benign.synthetic.max_margin works from the keys' Gram matrix alone."""

from __future__ import annotations

import numpy as np

from benign.synthetic.max_margin import svm_direction_from_gram


def svm_direction(K, selected) -> np.ndarray:
    """p^mm (d,) for explicit keys K (n, T, d), by the Gram route."""
    K = np.asarray(K, dtype=np.float64)
    n, T, d = K.shape
    flat = K.reshape(n * T, d)
    c, _ = svm_direction_from_gram(flat @ flat.T, T, selected)
    return flat.T @ c


def cosine_from_gram(G, c1, c2) -> float:
    """cos(K^T c1, K^T c2) from G = K K^T."""
    G, c1, c2 = (np.asarray(x, dtype=np.float64) for x in (G, c1, c2))
    return float(c1 @ G @ c2 / np.sqrt((c1 @ G @ c1) * (c2 @ G @ c2)))
