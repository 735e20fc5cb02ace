"""The encoder's speed settings, in one place. Each is exact (tests compare against the plain
computation); a default is only what has been timed on the device kind it applies to.

Environment variables:
- ``BENIGN_CUDA_GRAPHS=0``: on CUDA, step without capturing the step as a CUDA graph (default:
  graphs; timed on an H200).
- ``BENIGN_CUDA_DEFER_STEPS=N``: on CUDA, defer every matrix's updates by N steps, all folding on
  the same step, one captured graph per pending state (default 0: updates applied in their step;
  deferral on CUDA is opt-in until ``benchmarks/gpu_suite.sh`` has timed it).
"""

from __future__ import annotations

import os

DEFER_ROWS = 64  # CPU: rows of pending updates per matrix before they are folded in
MAX_GRAPHS = 16  # CUDA: captured step graphs per batch; other pending states step eagerly
WARMUP_STEPS = 3  # CUDA: eager steps on a side stream before the first capture, as capture requires
TEST_CACHE_FLOATS = 1 << 25  # normalised test tokens kept between evaluations up to this size (128 MB)


def cuda_graphs() -> bool:
    return os.environ.get("BENIGN_CUDA_GRAPHS", "1") != "0"


def cuda_defer_steps() -> int:
    """Steps of updates deferred between folds on CUDA (``BENIGN_CUDA_DEFER_STEPS``, default 0)."""
    env = os.environ.get("BENIGN_CUDA_DEFER_STEPS", "").strip()
    if not env:
        return 0
    try:
        steps = int(env)
    except ValueError:
        steps = -1
    if steps < 0:
        raise ValueError(f"BENIGN_CUDA_DEFER_STEPS must be a whole number >= 0, got {env!r}")
    return steps
