"""Random streams (benign.core.rng): one per (seed, name), the same every time, independent of
the others: a draw of one stream does not depend on which other streams were drawn, or in what
order."""

import numpy as np
import torch

from benign.core import rng


def test_a_stream_is_its_seed_sequence_of_the_seed_and_the_names_code_points():
    """The derived seed, worked by hand: numpy's SeedSequence of [seed, code points of the name],
    its first 64-bit word halved to 63 bits."""
    words = np.random.SeedSequence([7, ord("i"), ord("n"), ord("i"), ord("t")]).generate_state(1, dtype=np.uint64)
    assert rng.derived_seed(7, "init") == int(words[0]) >> 1
    assert 0 <= rng.derived_seed(7, "init") < 2**63


def test_streams_differ_by_name_and_seed_and_repeat_exactly():
    seeds = {rng.derived_seed(s, name) for s in (1, 2, 3) for name in ("noise", "flips", "init", "real_split")}
    assert len(seeds) == 12
    first = torch.randn(5, generator=rng.generator(42, "noise"))
    torch.randn(100, generator=rng.generator(42, "flips"))  # another stream drawn in between
    assert torch.equal(torch.randn(5, generator=rng.generator(42, "noise")), first)
