"""How the real-data jobs cut their work, torch-free so that the job estimates
(``benign.plan.resources``) read the same numbers the jobs use."""

from __future__ import annotations

BACKBONE_BATCH = 64  # rows per backbone forward pass (rule features_real)
TEST_CHUNK_ROWS = 1024  # test rows in memory at once when phase 2 evaluates (a multiple of its batch of 256)
HELD_TEST_BYTES = 2**30  # phase 2 keeps the test split's prepared inputs up to this size (``held_test``)


def held_test(rows: int, tokens: int, hidden: int) -> bool:
    """Whether phase 2 keeps the test split's pre-norm tokens and values (float32, ``rows`` x
    ``tokens`` x ``hidden`` each) in memory between recorded epochs rather than reading and
    preparing them again at each (benign.real.batched.TestInputs)."""
    return 8 * rows * tokens * hidden <= HELD_TEST_BYTES


def part_ranges(rows: int, parts: int, batch: int = BACKBONE_BATCH) -> list[tuple[int, int]]:
    """``parts`` contiguous [lo, hi) ranges covering ``rows``, cut at multiples of ``batch`` so
    that every part runs the same backbone batches as one pass over all rows would (the same
    numbers, only split). Trailing parts may be empty when there are fewer batches than parts."""
    if parts < 1:
        raise ValueError(f"parts must be >= 1, not {parts}")
    batches = -(-rows // batch)
    cuts = [min(rows, batch * (batches * k // parts)) for k in range(parts + 1)]
    return list(zip(cuts[:-1], cuts[1:]))
