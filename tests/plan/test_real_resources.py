"""What a real-data job needs, and a config's real-data jobs within the site's ceilings
(benign.plan.real_resources): the cost model's arithmetic worked by hand on a tiny backbone,
the rows a data set counts, cells over a ceiling split into the same runs, and a feature cache
that no split brings under one refused."""

import math

import pytest

from benign.plan import ConfigError
from benign.plan import jobs as plan
from benign.plan.real_resources import (
    BackboneShape,
    dataset_rows,
    feature_parts,
    features_need,
    finetune_need,
    job_needs,
    pretrain_need,
    split_to_fit,
)
from benign.plan.resources import CPU_SECONDS, Need
from tests.helpers.configs import checked

# 2 layers of width d = 4, 2 heads, MLP width m = 8, T = 3 tokens
SHAPE = BackboneShape(layers=2, hidden=4, heads=2, mlp=8, tokens=3, parameters=100)
ROWS = dict(train_rows=100, hidden_rows=40, test_rows=50)


def test_a_phase_2_jobs_time_is_its_steps_and_its_recorded_evaluations():
    # n 20 at batch 16: 2 steps an epoch, 20 in 10 epochs; a sample's work 4 T d + 3 d^2 + 4 d m = 48 + 48 + 128
    a, c = CPU_SECONDS["real_phase2"]["a"], CPU_SECONDS["real_phase2"]["c"]
    need = finetune_need(SHAPE, n=20, runs=3, epochs=10, batch_size=16, **ROWS, records=5)
    steps = 20 * (a * 16 * 3 * 224 + c)
    evaluations = (
        a * 5 * (50 + 20) * 3 * 224 / 3
    )  # 5 records of the test split and the n rows, a third of a step's work
    assert need.seconds == pytest.approx(steps + evaluations)
    assert need.runtime_min == math.ceil((60 + 2 * need.seconds) / 60)  # a start, and twice the estimate
    assert finetune_need(SHAPE, n=20, runs=3, epochs=10, batch_size=16, **ROWS, records=5, device="cuda").seconds == (
        pytest.approx(need.seconds / 1.5)
    )


def test_a_phase_2_job_counts_the_test_split_it_keeps(monkeypatch):
    """Phase 2 keeps the test split's pre-norm tokens and values (float32) where they fit
    ``HELD_TEST_BYTES``: 1000 rows of 128 tokens of width 384, 8 * 1000 * 128 * 384 bytes more."""
    import benign.real.sizes as sizes
    from benign.plan.resources import TEMPORARIES

    shape, rows = BackboneShape(6, 384, 6, 1536, 128, 0), dict(train_rows=4000, hidden_rows=400, test_rows=1000)
    kept = finetune_need(shape, n=200, runs=3, epochs=10, batch_size=16, **rows)
    assert sizes.held_test(1000, 128, 384)
    monkeypatch.setattr(sizes, "HELD_TEST_BYTES", 8 * 1000 * 128 * 384 - 1)  # one byte short of the split
    assert not sizes.held_test(1000, 128, 384)
    read = finetune_need(shape, n=200, runs=3, epochs=10, batch_size=16, **rows)
    assert kept.mem_mb - read.mem_mb == pytest.approx(TEMPORARIES * 8 * 1000 * 128 * 384 / 2**20, abs=1)
    assert kept.seconds == read.seconds


def test_a_phase_1_jobs_time_is_its_heads_steps():
    # a pooler and 2 classes: a head of d * 2 + d^2 = 24 weights (8 without the pooler); 50 rows at batch 16: 4 steps an epoch
    a, c = CPU_SECONDS["real_phase1"]["a"], CPU_SECONDS["real_phase1"]["c"]
    need = pretrain_need(SHAPE, classes=2, seeds=2, pretrain_size=50, epochs=3, batch_size=16, **ROWS, pooler=True)
    assert need.seconds == pytest.approx(12 * (a * 2 * 16 * 24 + c))
    plain = pretrain_need(SHAPE, classes=2, seeds=2, pretrain_size=50, epochs=3, batch_size=16, **ROWS)
    assert plain.seconds == pytest.approx(12 * (a * 2 * 16 * 8 + c))


def test_a_feature_jobs_time_is_every_row_through_every_layer_and_a_part_its_largest_share():
    # 150 rows, 2 layers, 3 tokens, 12 d^2 + 2 T d = 192 + 24 per token
    a = CPU_SECONDS["features"]["a"]
    whole = features_need(SHAPE, **ROWS)
    assert whole.seconds == pytest.approx(a * 150 * 2 * 3 * 216)
    # in 2 parts cut at the backbone's batch of 64 rows, the largest part's: 64 training rows and 50 test rows
    half = features_need(SHAPE, **ROWS, parts=2)
    assert half.seconds == pytest.approx(a * (64 + 50) * 2 * 3 * 216) and half.mem_mb <= whole.mem_mb


def test_a_data_sets_rows_are_its_subsample_its_pool_and_its_test_split():
    config = checked()
    cells = plan.real_cells(config)
    # the rotten reviews: subsample 3200 train and 1000 test rows; seeds 42 and 314, n up to 200
    entry = config.real.datasets["rotten"]["subsample"]
    assert (entry["train"], entry["test"], config.real.seeds, max(config.real.ns)) == (3200, 1000, [42, 314], 200)
    assert dataset_rows(config, "rotten", cells) == dict(train_rows=3200, hidden_rows=400, test_rows=1000)


def test_the_needs_list_the_data_sets_in_sorted_order():
    """Not a set's order, which changes with the interpreter's hash seed (and with it which data
    set a ceiling's refusal names first)."""
    config = checked("full.yaml")
    needs = job_needs(config, plan.real_cells(config))
    assert len(needs["features"]) == 3
    assert list(needs["features"]) == list(needs["pretrain"]) == sorted(needs["features"])


def test_cells_over_a_ceiling_are_split_into_the_same_runs():
    config = checked()
    whole = plan.real_cells(config)
    tight = checked(cluster={"device": "cpu", "max_mem_mb": 4000, "max_runtime_min": 6})
    split = plan.real_cells(tight)
    runs = lambda cells: sorted((c["dataset"], c["seed"], c["n"], e) for c in cells.values() for e in c["etas"])
    assert runs(split) == runs(whole) and any("-" in job for job in split)
    assert split_to_fit(config, whole) == whole  # no ceiling: nothing to split
    assert all(tight.cluster.fits(need) for rule in ("train", "pretrain") for need in _needs(tight, split)[rule])


def _needs(config, cells) -> dict[str, list[Need]]:
    return {rule: list(needs.values()) for rule, needs in job_needs(config, cells).items()}


def test_a_feature_cache_too_large_for_any_split_is_refused():
    config = checked("paper.yaml", cluster={"device": "cpu", "max_mem_mb": 1000})
    with pytest.raises(
        ConfigError, match=r"real data set \w+: its features job needs \d+ MB .* parts of one backbone batch"
    ):
        feature_parts(config, plan.real_cells(config))
