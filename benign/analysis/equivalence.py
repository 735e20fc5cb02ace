"""What an interval can say about a theory's value (docs/regimes.md#words): an equivalence test
within a margin, a test of difference, or neither. The tables word their exponents with it."""

from __future__ import annotations

import numpy as np


def verdict(low: float, high: float, theory: float, margin: float) -> str:
    """Words an interval can carry (docs/regimes.md#words): "agrees" where the whole interval
    lies within ``margin`` of the theory's value (an equivalence test); "departs" where it
    excludes the value; "cannot tell" otherwise, and where an end is open."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return "cannot tell"
    if theory - margin <= low and high <= theory + margin:
        return "agrees"
    if low > theory or high < theory:
        return "departs"
    return "cannot tell"
