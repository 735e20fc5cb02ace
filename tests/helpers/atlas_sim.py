"""Simulated atlases with the real atlas's structure (benign/analysis/crossings.py,
benign/analysis/refinement.py): each (d, n, seed) line is its own draw whose labels along ||mu||
are one deterministic crossing; the lines of one (d, n) share whatever the law misses there (a
line effect); the coarse grid is the default's factor-2 grid with its SNR range and 2 seeds;
the refinement window is where those 2 seeds' mean label crosses 1/2, and 4 seeds are run there
at their staggered offsets, so that a seed whose crossing leaves the window is censored at its
end, as in the workflow."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from benign.analysis.refinement import crossings as window_crossings
from benign.analysis.refinement import offsets, window_norms

NORMS = [2.0**k for k in range(-2, 17)]  # the default atlas's factor-2 grid (config/config.yaml)
SNR_RANGE = (2.0**-7, 16.0)
LINES = [(d, n) for d in (1e3, 1e4, 1e5, 1e6, 1e7) for n in (10, 20, 40) if d >= 5 * n * n]
COARSE, REFINED = (1, 2), tuple(range(1, 5))  # the default's refinement seeds (config/config.yaml)


def coarse_norms(d: float) -> list[float]:
    low, high = SNR_RANGE
    return [m for m in NORMS if low <= m / math.sqrt(d) <= high]


def simulate(rng, a=0.25, gamma=0.0, b=0.0, c=1.5, sigma=0.02, tau=0.05, lines=LINES, seeds=REFINED,
             points=1) -> pd.DataFrame:  # fmt: skip
    """Runs (d, n, seed, signal_norm, side) of an atlas whose crossing on line (d, n, seed) is
    c d^a (ln d)^gamma n^b e^(tau u + sigma z): u one standard normal per (d, n) (the law's miss
    there, shared by its seeds), z one per seed. The coarse seeds run the whole grid; every seed
    of ``seeds`` runs each window at its offset (benign.analysis.refinement)."""
    shift = offsets(seeds)
    rows = []
    for d, n in lines:
        centre = c * d**a * math.log(d) ** gamma * n**b * math.exp(tau * rng.standard_normal())
        stars = {s: centre * math.exp(sigma * rng.standard_normal()) for s in seeds}
        grid = np.array(coarse_norms(d))
        mean = np.mean([grid > stars[s] for s in COARSE], axis=0)
        found = window_crossings(grid, mean)
        for s in seeds:
            norms = set(grid) if s in COARSE else set()
            for low, high in found:
                norms |= set(window_norms(low, high, points, shift[s]))
            rows += [{"d": d, "n": n, "seed": s, "signal_norm": x, "side": x > stars[s]} for x in sorted(norms)]
    return pd.DataFrame(rows)
