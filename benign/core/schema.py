"""The metrics schema, defined once: every Parquet writer and reader goes through here.

Tidy long tables:
- ``RUNS``: one row per finished synthetic run (parameters, final metrics, regime).
- ``CURVES``: one row per (run, logged step).
- ``ATTENTION``: one row per (run, logged step, training sample, token).
- ``REAL_RUNS`` / ``REAL_ATTENTION``: the real-data counterparts (one row per
  (dataset, backbone, n, eta, seed) cell, and one per (cell, epoch)).
- ``REAL_CURVES``: one row per (real-data run, recorded epoch): its test metrics over training.
"""

from __future__ import annotations

import os

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from benign.core.io import atomic_path
from benign.synthetic import spec

# Final or per-step metrics of a synthetic run: loss and accuracy against the labels trained on
# (train), on the clean test set, and the training accuracy on clean and on flipped samples.
# fmt: off
METRICS = [
    ("train_loss", pa.float64()), ("test_loss", pa.float64()),
    ("train_acc", pa.float64()), ("test_acc", pa.float64()),
    ("train_acc_clean", pa.float64()), ("train_acc_noisy", pa.float64()),
]
# Which tokens attention selects (benign.analysis.selection), per run and logged step: on the test set, the
# fraction of samples whose most-attended token is the relevant one, the mean attention on it and
# the normalised test loss r (1 uniform attention, 0 selection); the same on the clean training
# samples, with their mean attention gap Lambda and mean g(Lambda + log T) (docs/regimes.md#dynamics);
# and the fraction of flipped training samples whose most-attended token is of each kind.
SELECTION = [
    ("test_sel_relevant", pa.float64()), ("test_att_relevant", pa.float64()),
    ("test_loss_normalised", pa.float64()),
    ("train_clean_sel_relevant", pa.float64()), ("train_clean_att_relevant", pa.float64()),
    ("train_clean_loss_normalised", pa.float64()),
    ("train_clean_lambda", pa.float64()), ("train_clean_g", pa.float64()),
    ("train_noisy_sel_relevant", pa.float64()), ("train_noisy_sel_weak_true", pa.float64()),
    ("train_noisy_sel_weak_opposite", pa.float64()), ("train_noisy_sel_irrelevant", pa.float64()),
]
# The fixed head's test loss under one-hot attention on the relevant token and under uniform
# attention, and its test accuracy under uniform attention: constants of a run's test set
# (null for a model without a fixed head).
REFERENCES = [("test_loss_selected", pa.float64()), ("test_loss_uniform", pa.float64()),
              ("test_acc_uniform", pa.float64())]
# fmt: on

# The job's measured peaks (the same on every run of a job: one job is one process), in MB:
# the process's maximum resident set size, and the maximum memory allocated on its CUDA device
# (null on CPU). docs/cluster.md compares them with the workflow's estimates.
PEAK_MEMORY = [("peak_rss_mb", pa.float64()), ("peak_cuda_mb", pa.float64())]
# Columns that measure the machine, not the science: the only ones that may differ between
# two runs of the same config and seed.
MEASURED = ("wall_time_s", "peak_rss_mb", "peak_cuda_mb")

# A run's parameters, from its spec (benign.synthetic.spec): model keys are null for the other models.
ARROW = {"int": pa.int64(), "int | None": pa.int64(), "float": pa.float64(), "str": pa.string(), "bool": pa.bool_()}
RUN_PARAMETERS = [(f.name, ARROW[f.type]) for f in spec.FIELDS if f.name in spec.COLUMNS]

RUNS = pa.schema(
    [
        ("run_id", pa.string()),
        *RUN_PARAMETERS,
        ("snr", pa.float64()),
        ("n_noisy", pa.int64()),
        *METRICS,
        *SELECTION,
        *REFERENCES,
        # not_overfitting / benign / harmful from what attention selects (benign.analysis.theory), null unless ok
        ("regime", pa.string()),
        ("head_acc_regime", pa.string()),  # the same from the fixed head's test accuracy (secondary)
        # milestones (benign.analysis.milestones): a step, and whether it is censored at the horizon
        *[
            (f"{name}_{part}", kind)
            for name in ("fit_noisy", "fit_all", "generalized")
            for part, kind in (("step", pa.float64()), ("censored", pa.bool_()))
        ],  # fmt: skip
        ("status", pa.string()),  # ok / diverged
        ("wall_time_s", pa.float64()),  # the run's share of its batch's wall time
        ("device", pa.string()),
        *PEAK_MEMORY,
        ("code_version", pa.string()),
    ]
)

CURVES = pa.schema([("run_id", pa.string()), ("step", pa.int64()), *METRICS, *SELECTION])

# fmt: off
ATTENTION = pa.schema(
    [
        ("run_id", pa.string()), ("step", pa.int64()), ("sample", pa.int64()),
        ("token", pa.int64()),  # 0..T-1 input tokens; -1 is the encoder's [CLS] itself
        ("probability", pa.float64()),
        ("noisy", pa.bool_()),  # the sample's training label was flipped
        ("fitted", pa.bool_()),  # at this step the model predicts the label trained on
    ]
)
# fmt: on

# The attention-SVM check (benign.synthetic.max_margin_alignment): one row per (run, logged step). The run's
# keys, then: direction_norm ||p|| (W fixed) or ||W p|| (W trained); svm_norm ||p^mm|| of the
# step's selection; cosine between the two directions; margin_ratio, the smallest margin over
# ||direction|| divided by the SVM's 1 / ||p^mm|| (1 at the max-margin direction); the clean and
# the noisy samples' smallest margins; selection_changed since the previous logged step; the
# fractions of clean samples selecting token 1 (clean_signal), and of noisy samples selecting
# token 1, token 3 (noisy_opposite), a noise token, or a token whose score has the flipped
# label's sign (noisy_agrees).
ALIGNMENT = pa.schema(
    [*RUN_PARAMETERS, ("step", pa.int64()),
     ("train_loss", pa.float64()), ("direction_norm", pa.float64()), ("svm_norm", pa.float64()),
     ("cosine", pa.float64()), ("margin_ratio", pa.float64()), ("min_margin_clean", pa.float64()),
     ("min_margin_noisy", pa.float64()), ("selection_changed", pa.bool_()), ("clean_signal", pa.float64()),
     ("noisy_signal", pa.float64()), ("noisy_opposite", pa.float64()), ("noisy_noise", pa.float64()),
     ("noisy_agrees", pa.float64()),
     # baselines of the cosine: the SVM direction of a random selection, of the first selection
     # gradient descent makes (step 1), and the relevant tokens' mean key; and the share of samples
     # whose selection is locally optimal (selected head score above every support token's)
     ("cosine_random", pa.float64()), ("cosine_early", pa.float64()), ("cosine_relevant", pa.float64()),
     ("locally_optimal", pa.float64()),
     ("wall_time_s", pa.float64()),  # the batch's training time, on each of its rows
     ("peak_rss_mb", pa.float64())]  # the job's peak (benign.core.device.peak_memory_mb)
)  # fmt: skip

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

SCHEMAS = {
    "runs": RUNS,
    "curves": CURVES,
    "attention": ATTENTION,
    "real_runs": REAL_RUNS,
    "real_attention": REAL_ATTENTION,
    "real_curves": REAL_CURVES,
}


def to_table(df: pd.DataFrame, schema: pa.Schema) -> pa.Table:
    """Conform a DataFrame to ``schema`` (column order, types); missing columns are an error."""
    missing = [name for name in schema.names if name not in df.columns]
    if missing:
        raise ValueError(f"columns missing for schema: {missing}")
    return pa.Table.from_pandas(df[schema.names], schema=schema, preserve_index=False)


def write_parquet(df: pd.DataFrame, schema: pa.Schema, path: str | os.PathLike) -> None:
    """Write ``df`` atomically: a temporary file in the same folder, then rename."""
    write_table_atomic(to_table(df, schema), path)


def write_table_atomic(table: pa.Table, path: str | os.PathLike) -> None:
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def read_parquet(paths, schema: pa.Schema) -> pd.DataFrame:
    """Read and concatenate Parquet files, checking each against ``schema``."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    tables = []
    for p in paths:
        t = pq.read_table(p)
        if not t.schema.equals(schema, check_metadata=False):
            raise ValueError(f"{p}: schema differs from the expected one:\n{t.schema}\nexpected:\n{schema}")
        tables.append(t)
    if not tables:
        return schema.empty_table().to_pandas()
    return pa.concat_tables(tables).to_pandas()
