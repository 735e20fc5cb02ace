"""How the real-data jobs cut their work (benign.real.sizes): a feature cache's parts cover every
row once, cut at the backbone's batches, so that the parts run the batches one pass would."""

import pytest

from benign.real.sizes import BACKBONE_BATCH, TEST_CHUNK_ROWS, part_ranges


def test_parts_cover_the_rows_at_batch_boundaries_worked_by_hand():
    # 10 rows in batches of 4: batches [0, 4), [4, 8), [8, 10); 2 parts take 1 and 2 of them
    assert part_ranges(10, 2, batch=4) == [(0, 4), (4, 10)]
    assert part_ranges(10, 1, batch=4) == [(0, 10)]
    assert part_ranges(3, 4, batch=4) == [(0, 0), (0, 0), (0, 0), (0, 3)]  # fewer batches than parts: empty parts


@pytest.mark.parametrize("rows, parts", [(1000, 3), (4000, 8), (64, 2), (65, 2), (12345, 5)])
def test_every_row_is_in_one_part_and_every_inner_cut_is_a_whole_batch(rows, parts):
    ranges = part_ranges(rows, parts)
    assert len(ranges) == parts and ranges[0][0] == 0 and ranges[-1][1] == rows
    assert all(hi == lo for (_, hi), (lo, _) in zip(ranges[:-1], ranges[1:]))
    assert all(hi % BACKBONE_BATCH == 0 for _, hi in ranges[:-1])


def test_a_part_count_below_one_is_refused_and_the_test_chunk_holds_whole_batches():
    with pytest.raises(ValueError, match="parts must be >= 1, not 0"):
        part_ranges(10, 0)
    assert TEST_CHUNK_ROWS % 256 == 0
