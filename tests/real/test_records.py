"""Phase 2's recorded epochs and what the runs table reads from them (benign/real/records.py)."""

import math

import numpy as np
import pytest

from benign.real.records import Record, record_epochs, split_accuracy, summarise


def test_a_count_gives_log_spaced_epochs_with_both_ends():
    epochs = record_epochs(2000, 30)
    assert epochs[0] == 0 and epochs[-1] == 2000 and epochs == sorted(set(epochs))
    assert 25 <= len(epochs) <= 30  # repeats of the rounded small epochs merged
    gaps = np.diff(np.log1p(epochs[-10:]))
    assert np.allclose(
        gaps, math.log1p(2000) / 29, rtol=0.05
    )  # evenly spaced in log(1 + epoch) where rounding is small
    assert record_epochs(4, 3) == [0, 1, 4]  # expm1 of 0, log(5)/2, log(5): 0, 1.24, 4
    assert record_epochs(10, [0, 3, 10]) == [0, 3, 10]


@pytest.mark.parametrize(
    "schedule, words",
    [(1, "at least 2"), ([0, 5], "end at finetune_epochs 10"), ([1, 10], "start at 0"), ([0, 5, 5, 10], "rise"),
     ([0, 2.5, 10], "integers"), ("30", "a count"), (True, "a count")],
)  # fmt: skip
def test_a_bad_schedule_is_refused_naming_the_key(schedule, words):
    with pytest.raises(ValueError, match=rf"real\.protocol\.record_epochs = .*{words}"):
        record_epochs(10, schedule)


def test_split_accuracy_by_hand():
    correct = np.array([1, 0, 1, 1, 0], dtype=bool)
    noisy = np.array([0, 0, 1, 0, 1], dtype=bool)
    assert split_accuracy(correct, noisy) == (2 / 3, 1 / 2)
    clean, flipped = split_accuracy(correct, np.zeros(5, dtype=bool))
    assert clean == 3 / 5 and math.isnan(flipped)


def records(acc, noisy):
    return [Record(e, 0.0, a, 1.0, f) for e, a, f in zip((0, 1, 3, 10, 30), acc, noisy)]


def test_summary_by_hand():
    """Peak 0.8 at epoch 3, end 0.7; the noisy rows are fitted at 3, lost at 10, fitted from 30 on."""
    out = summarise(records([0.5, 0.6, 0.8, 0.75, 0.7], [0.0, 0.5, 1.0, 0.5, 1.0]), n_noisy=2)
    assert out == dict(peak_test_acc=0.8, peak_epoch=3, acc_lost=pytest.approx(0.1), noisy_fitted_epoch=30.0,
                       noisy_censored=False)  # fmt: skip
    fitted_early = summarise(records([0.5, 0.9, 0.8, 0.8, 0.8], [0.0, 1.0, 1.0, 1.0, 1.0]), n_noisy=2)
    assert fitted_early["noisy_fitted_epoch"] == 1.0 and fitted_early["peak_epoch"] == 1
    censored = summarise(records([0.5] * 5, [0.0, 1.0, 1.0, 1.0, 0.5]), n_noisy=2)
    assert math.isnan(censored["noisy_fitted_epoch"]) and censored["noisy_censored"]
    clean = summarise(records([0.5] * 5, [math.nan] * 5), n_noisy=0)
    assert math.isnan(clean["noisy_fitted_epoch"]) and not clean["noisy_censored"] and clean["acc_lost"] == 0.0
