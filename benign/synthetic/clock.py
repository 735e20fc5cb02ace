"""The theory's clock g (Sakamoto and Sato, Section 4; docs/regimes.md#dynamics): the number of
gradient steps a softmax needs to grow its gap on one token scales like g of that gap. Torch-free:
the planner's modules import it with the labels."""

from __future__ import annotations

import math

import numpy as np


def g(x, T: int):
    """g(x) = 2x + 2 sinh(x - log T).

    It is the integral over x of 1 / (s (1 - s)) with s = e^x / (e^x + T), the softmax
    weight of a token whose logit exceeds the others' by x: the number of gradient steps
    needed to grow the attention gap to x scales like g(x), exponentially in x.
    """
    x = np.asarray(x, dtype=float)
    return 2 * x + 2 * np.sinh(x - math.log(T))
