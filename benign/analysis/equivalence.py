"""What an interval can say about a theory's value (docs/regimes.md#words): two one-sided tests
about a stated margin, symmetric: "agrees" where the whole interval lies inside the margin,
"departs" where the whole interval lies outside it, and "cannot tell" where it reaches across
an edge of the margin. The tables word their exponents with it."""

from __future__ import annotations

import numpy as np


def verdict(low: float, high: float, theory: float, margin: float) -> str:
    """Words an interval can carry (docs/regimes.md#words): "agrees" where the whole interval
    lies within ``margin`` of the theory's value (an equivalence test); "departs" where the whole
    interval lies further than ``margin`` from it (a test of a difference larger than the
    margin); "cannot tell" where it straddles an edge of the margin, and where an end is open.
    An interval that excludes the value but not the margin says "cannot tell": the point value
    outside the interval is not enough."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return "cannot tell"
    if theory - margin <= low and high <= theory + margin:
        return "agrees"
    if low > theory + margin or high < theory - margin:
        return "departs"
    return "cannot tell"
