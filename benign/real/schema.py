"""The real half's tables, defined once: ``REAL_RUNS``, one row per (dataset, backbone, n, eta,
seed) cell; ``REAL_ATTENTION``, one per (cell, epoch); ``REAL_CURVES``, one per (cell, recorded
epoch) with its test metrics over training."""

from __future__ import annotations

import pyarrow as pa

from benign.core.schema import PEAK_MEMORY

# a real-data run's training-set size, noise rate and seed
REAL_CELL = [("n", pa.int64()), ("eta", pa.float64()), ("seed", pa.int64())]

REAL_RUNS = pa.schema(
    [
        ("run_id", pa.string()),
        ("dataset", pa.string()),  # the name used in config (e.g. "mnist")
        ("dataset_label", pa.string()),  # human label, says what stands in for what
        ("paper_dataset", pa.string()),  # the paper dataset this reproduces, null if none
        ("backbone", pa.string()),  # backbone id actually used
        *REAL_CELL,
        ("num_classes", pa.int64()),
        ("pretrain_size", pa.int64()),
        ("pretrain_epochs", pa.int64()),
        ("finetune_epochs", pa.int64()),
        ("baseline_acc", pa.float64()),  # phase-1 test accuracy
        # the cost of re-initialising query/key (benign.real.reinit_cost)
        ("reinit_test_acc", pa.float64()),  # test accuracy at epoch 0 of phase 2
        ("uniform_test_acc", pa.float64()),  # the phase-1 head with uniform attention at position 0
        ("attention_share", pa.float64()),  # backbone's own attention: branch share of the position-0 norm
        # test metrics over training (benign.real.records), over the recorded epochs
        ("n_noisy", pa.int64()),  # rows whose label is flipped
        ("peak_test_acc", pa.float64()),
        ("peak_epoch", pa.int64()),
        ("acc_lost", pa.float64()),  # peak less final test accuracy
        ("noisy_fitted_epoch", pa.float64()),  # from which every noisy row stays fitted; NaN if none or censored
        ("noisy_censored", pa.bool_()),  # noisy rows not all fitted at the last epoch
        ("train_loss_last_epoch", pa.float64()),  # mean over the last epoch's batches
        ("train_loss", pa.float64()),  # evaluated after training, noisy labels
        ("train_acc", pa.float64()),  # against the noisy labels trained on
        ("test_loss", pa.float64()),
        ("test_acc", pa.float64()),  # the final test accuracy
        ("status", pa.string()),
        ("wall_time_s", pa.float64()),
        ("device", pa.string()),
        *PEAK_MEMORY,
        ("code_version", pa.string()),
    ]
)

REAL_ATTENTION = pa.schema(
    [
        ("run_id", pa.string()),
        ("dataset", pa.string()),
        *REAL_CELL,
        ("epoch", pa.int64()),
        ("train_loss", pa.float64()),
        ("max_attention", pa.float64()),  # mean over samples and heads of max attention from position 0
    ]
)

REAL_CURVES = pa.schema(
    [
        ("run_id", pa.string()),
        ("dataset", pa.string()),
        *REAL_CELL,
        ("epoch", pa.int64()),  # a recorded epoch; 0 is before the first step
        ("test_loss", pa.float64()),
        ("test_acc", pa.float64()),
        ("train_acc_clean", pa.float64()),  # against the labels trained on; NaN without clean rows
        ("train_acc_noisy", pa.float64()),  # noisy rows whose flipped label is predicted; NaN without noisy rows
    ]
)
