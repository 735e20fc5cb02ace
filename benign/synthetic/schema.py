"""The synthetic half's tables, defined once (tidy long tables):

- ``RUNS``: one row per finished synthetic run (parameters, final metrics, regime).
- ``CURVES``: one row per (run, logged step).
- ``ATTENTION``: one row per (run, logged step, training sample, token).
- ``ALIGNMENT``: one row per (run, logged step) of the attention-SVM check.
"""

from __future__ import annotations

import pyarrow as pa

from benign.core.schema import PEAK_MEMORY
from benign.synthetic import spec

# Final or per-step metrics of a synthetic run: loss and accuracy against the labels trained on
# (train), on the clean test set, and the training accuracy on clean and on flipped samples.
# fmt: off
METRICS = [
    ("train_loss", pa.float64()), ("test_loss", pa.float64()),
    ("train_acc", pa.float64()), ("test_acc", pa.float64()),
    ("train_acc_clean", pa.float64()), ("train_acc_noisy", pa.float64()),
]
# Which tokens attention selects (benign.synthetic.selection), per run and logged step: on the test set, the
# fraction of samples whose most-attended token is the relevant one, the mean attention on it,
# the normalised test loss r (1 uniform attention, 0 selection) and the test error of the hard-max
# readout (each sample reads its most-attended token only; null without a fixed head); the same on the clean training
# samples, with their mean attention gap Lambda and mean g(Lambda + log T) (docs/regimes.md#dynamics), and the
# test samples' mean Lambda and g (no memorised noise of their own: the signal's part of the gap);
# and the fraction of flipped training samples whose most-attended token is of each kind.
SELECTION = [
    ("test_sel_relevant", pa.float64()), ("test_att_relevant", pa.float64()),
    ("test_loss_normalised", pa.float64()), ("test_err_hardmax", pa.float64()),
    ("train_clean_sel_relevant", pa.float64()), ("train_clean_att_relevant", pa.float64()),
    ("train_clean_loss_normalised", pa.float64()),
    ("train_clean_lambda", pa.float64()), ("train_clean_g", pa.float64()),
    ("test_lambda", pa.float64()), ("test_g", pa.float64()),
    ("train_noisy_sel_relevant", pa.float64()), ("train_noisy_sel_weak_true", pa.float64()),
    ("train_noisy_sel_weak_opposite", pa.float64()), ("train_noisy_sel_irrelevant", pa.float64()),
]
# The fixed head's test loss under one-hot attention on the relevant token and under uniform
# attention, and its test accuracy under uniform attention: constants of a run's test set
# (null for a model without a fixed head).
REFERENCES = [("test_loss_selected", pa.float64()), ("test_loss_uniform", pa.float64()),
              ("test_acc_uniform", pa.float64())]
# fmt: on

# A run's parameters, from its spec (benign.synthetic.spec): model keys are null for the other models.
ARROW = {
    "int": pa.int64(),
    "int | None": pa.int64(),
    "float": pa.float64(),
    "float | None": pa.float64(),
    "str": pa.string(),
    "bool": pa.bool_(),
    "tuple": pa.list_(pa.string()),
}
RUN_PARAMETERS = [(f.name, ARROW[f.type]) for f in spec.FIELDS if f.name in spec.COLUMNS]

RUNS = pa.schema(
    [
        ("run_id", pa.string()),
        *RUN_PARAMETERS,
        ("snr", pa.float64()),
        ("n_noisy", pa.int64()),
        ("iterations", pa.int64()),  # model updates taken: steps for gradient descent (benign.synthetic.flow)
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
     # the test error of the hard-max readout of the trained state and of the SVM direction of its
     # selection (the long-time error where the direction converges to it), and the share of test
     # samples whose most-attended token the two agree on
     ("test_err_hardmax", pa.float64()), ("test_err_svm", pa.float64()), ("test_svm_agreement", pa.float64()),
     ("wall_time_s", pa.float64()),  # the batch's training time, on each of its rows
     ("peak_rss_mb", pa.float64())]  # the job's peak (benign.core.device.peak_memory_mb)
)  # fmt: skip
