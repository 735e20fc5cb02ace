"""Simulated atlases: runs on the default atlas's lines whose labels along each (d, n, seed)
line are one deterministic crossing, as the trained runs' are (benign/analysis/crossings.py)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

GRID = [float(2**k) for k in range(1, 15)]  # the default atlas's norms (config/config.yaml)
LINES = [(d, n) for d in (1e3, 1e4, 1e5, 1e6, 1e7) for n in (10, 20, 40) if d >= 5 * n * n]


def simulate(rng, a=0.25, gamma=0.0, b=0.0, c=1.5, sigma=0.1, seeds=2, lines=LINES) -> pd.DataFrame:
    """Runs of the atlas's lines: each line-seed has one ||mu||* = c d^a (ln d)^gamma n^b e^(sigma z);
    its runs on the factor-2 grid, and 3 refined norms inside its bracket, are on the upper side
    exactly when their norm exceeds it (the labels along a line are one deterministic crossing)."""
    rows = []
    for d, n in lines:
        for seed in range(seeds):
            star = c * d**a * math.log(d) ** gamma * n**b * math.exp(sigma * rng.standard_normal())
            norms = list(GRID)
            k = int(np.searchsorted(GRID, star))
            if 0 < k < len(GRID):
                norms += [GRID[k - 1] * 2 ** (j / 4) for j in (1, 2, 3)]
            rows += [{"d": d, "n": n, "seed": seed, "signal_norm": x, "side": x > star} for x in norms]
    return pd.DataFrame(rows)
