"""Phase 2's test metrics over training (docs/real_protocol.md#test-metrics-over-training).

At the configured epochs (``record_epochs``: about 30 log-spaced ones, epoch 0 before any step
and the last epoch included) every run records its test loss and accuracy, and its training
accuracy on its clean rows and on its noisy rows (against the noisy labels it trains on: a
noisy row counts as fitted when the head predicts its flipped label). ``summarise`` reads the
columns of the runs table from them. Torch-free, so that the configuration layer checks a
schedule with the function the runs use.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def record_epochs(
    finetune_epochs: int, schedule: int | list[int], key: str = "real.protocol.record_epochs"
) -> list[int]:
    """The recorded epochs: ``schedule`` points spaced evenly in log(1 + epoch) from 0 to
    ``finetune_epochs`` (rounded; repeats merged), or the list itself. A list must rise strictly
    from 0 to ``finetune_epochs``: the peak and the final accuracy need both ends. ``key`` names
    the config key in the error."""
    if isinstance(schedule, bool) or not isinstance(schedule, (int, list)):
        raise ValueError(f"config key {key} = {schedule!r}: a count of epochs (>= 2) or a list of epochs")
    if isinstance(schedule, int):
        if schedule < 2:
            raise ValueError(f"config key {key} = {schedule!r}: at least 2 epochs (0 and {finetune_epochs})")
        points = np.expm1(np.linspace(0.0, math.log1p(finetune_epochs), schedule))
        return sorted({int(round(p)) for p in points} | {0, finetune_epochs})
    if any(isinstance(e, bool) or not isinstance(e, int) for e in schedule):
        raise ValueError(f"config key {key} = {schedule!r}: epochs must be integers")
    if not schedule or schedule[0] != 0 or schedule[-1] != finetune_epochs:
        raise ValueError(
            f"config key {key} = {schedule!r}: must start at 0 and end at finetune_epochs {finetune_epochs}"
        )
    if any(b <= a for a, b in zip(schedule, schedule[1:])):
        raise ValueError(f"config key {key} = {schedule!r}: epochs must rise strictly")
    return list(schedule)


@dataclass(frozen=True)
class Record:
    """One run at the end of one recorded epoch (0: before any step)."""

    epoch: int
    test_loss: float
    test_acc: float
    train_acc_clean: float  # NaN when every row is noisy
    train_acc_noisy: float  # fraction of the noisy rows whose flipped label is predicted; NaN without noisy rows

    def values(self) -> tuple[float, float, float, float]:
        return (self.test_loss, self.test_acc, self.train_acc_clean, self.train_acc_noisy)


def split_accuracy(correct: np.ndarray, noisy: np.ndarray) -> tuple[float, float]:
    """(accuracy on the clean rows, on the noisy rows) of per-row hits ``correct`` against the noisy labels."""
    correct, noisy = np.asarray(correct, dtype=bool), np.asarray(noisy, dtype=bool)
    clean = float(correct[~noisy].mean()) if (~noisy).any() else math.nan
    flipped = float(correct[noisy].mean()) if noisy.any() else math.nan
    return clean, flipped


def summarise(records: list[Record], n_noisy: int) -> dict:
    """The runs table's columns read from a run's records.

    - ``peak_test_acc`` and ``peak_epoch``: the best recorded test accuracy, the first epoch it is reached;
    - ``acc_lost``: the peak less the last recorded test accuracy;
    - ``noisy_fitted_epoch``: the first recorded epoch from which every noisy row stays fitted
      at every later recorded epoch; NaN when the run has no noisy row, or when they are not
      all fitted at the last epoch, then ``noisy_censored`` is True (not reached by the horizon).
    """
    acc = np.array([r.test_acc for r in records])
    peak = int(np.argmax(acc))
    fitted = np.array([r.train_acc_noisy == 1.0 for r in records])
    censored = n_noisy > 0 and not fitted[-1]
    if n_noisy == 0 or censored:
        epoch = math.nan
    else:
        first = len(fitted) - int(np.argmin(fitted[::-1])) if not fitted.all() else 0
        epoch = float(records[first].epoch)
    return dict(
        peak_test_acc=float(acc[peak]),
        peak_epoch=int(records[peak].epoch),
        acc_lost=float(acc[peak] - acc[-1]),
        noisy_fitted_epoch=epoch,
        noisy_censored=bool(censored),
    )
