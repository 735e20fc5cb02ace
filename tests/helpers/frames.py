"""Small tables that conform to benign.core.schema, for rendering tests."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pyarrow as pa

from benign.core import schema
from benign.real import schema as real_schema
from benign.synthetic import schema as syn_schema
from benign.synthetic import spec
from benign.synthetic.spec import RunSpec

# a run's parameters: the paper defaults of the run spec (benign/synthetic/spec.py)
RUN_DEFAULTS = dict(
    **{k: v for k, v in dataclasses.asdict(RunSpec(setting="heatmap", step_size=10.0)).items() if k in spec.COLUMNS},
    n_noisy=4,
    iterations=1000,
    train_loss=0.45,
    test_loss=0.5,
    train_acc=1.0,
    test_acc=0.99,
    train_acc_clean=1.0,
    train_acc_noisy=1.0,
    test_sel_relevant=1.0,
    test_att_relevant=0.8,
    test_loss_normalised=0.2,
    test_err_hardmax=0.01,
    train_clean_sel_relevant=1.0,
    train_clean_att_relevant=0.9,
    train_clean_loss_normalised=0.1,
    train_clean_lambda=2.1972245773362196,  # attention 0.9 on the relevant token
    train_clean_g=17.442221126921,  # g(Lambda + log 8)
    test_lambda=2.1972245773362196,
    test_g=17.442221126921,
    train_noisy_sel_relevant=0.0,
    train_noisy_sel_weak_true=0.0,
    train_noisy_sel_weak_opposite=0.5,
    train_noisy_sel_irrelevant=0.5,
    test_loss_selected=0.4,
    test_loss_uniform=0.65,
    test_acc_uniform=0.99,
    regime="benign",
    head_acc_regime="benign",
    fit_noisy_step=100.0,
    fit_noisy_censored=False,
    fit_all_step=100.0,
    fit_all_censored=False,
    generalized_step=200.0,
    generalized_censored=False,
    status="ok",
    wall_time_s=1.0,
    device="cpu",
    peak_rss_mb=500.0,
    peak_cuda_mb=float("nan"),
    code_version="test",
)
REAL_RUN_DEFAULTS = dict(
    dataset="mnist",
    dataset_label="MNIST",
    paper_dataset="MNIST",
    backbone="google/vit-base-patch16-224-in21k",
    n=200,
    eta=0.1,
    seed=42,
    num_classes=10,
    pretrain_size=10000,
    pretrain_epochs=300,
    finetune_epochs=2000,
    baseline_acc=0.95,
    reinit_test_acc=0.3,
    uniform_test_acc=0.25,
    attention_share=0.6,
    n_noisy=20,
    peak_test_acc=0.92,
    peak_epoch=25,
    acc_lost=0.02,
    noisy_fitted_epoch=300.0,
    noisy_censored=False,
    train_loss_last_epoch=0.01,
    train_loss=0.01,
    train_acc=1.0,
    test_loss=0.3,
    test_acc=0.9,
    status="ok",
    wall_time_s=1.0,
    device="cpu",
    peak_rss_mb=500.0,
    peak_cuda_mb=float("nan"),
    code_version="test",
)


def conform(rows: list[dict], table_schema: pa.Schema) -> pd.DataFrame:
    """Build, check against the schema, and return the frame as a reader would see it."""
    return schema.to_table(pd.DataFrame(rows), table_schema).to_pandas()


def runs(rows: list[dict]) -> pd.DataFrame:
    out = []
    for i, row in enumerate(rows):
        full = {**RUN_DEFAULTS, "run_id": f"run{i}", **row}
        if "sweeps" not in row:  # a run of its own setting alone
            full["sweeps"] = [full["setting"]]
        full.setdefault("snr", full["signal_norm"] / math.sqrt(full["d"]))
        out.append(full)
    return conform(out, syn_schema.RUNS)


# Two data sets of the real tables and figures: one the paper ran, one standing in for another
REAL_DATASETS = [
    dict(dataset="mnist", dataset_label="MNIST", paper_dataset="MNIST"),
    dict(dataset="sst2", dataset_label="SST-2 (stands in for AG-news)", paper_dataset=None,
         backbone="bert-base-uncased", num_classes=2),
]  # fmt: skip


def real_runs(rows: list[dict]) -> pd.DataFrame:
    return conform(
        [{**REAL_RUN_DEFAULTS, "run_id": f"real{i}", **row} for i, row in enumerate(rows)], real_schema.REAL_RUNS
    )


def heatmap_runs() -> pd.DataFrame:
    """A 4 x 3 (d, ||mu||) grid, 2 seeds a cell, one run diverged and one ok run with a NaN test loss."""
    rows = []
    for d in (250, 375, 500, 625):
        for norm in (5.0, 7.5, 10.0):
            for seed in (1, 2):
                rows.append(
                    dict(
                        d=d,
                        signal_norm=norm,
                        seed=seed,
                        train_loss=0.4 + d / 1e4 + seed / 100,
                        test_loss=norm / 10,
                        train_acc=1.0,
                        test_acc=0.5 + norm / 20,
                    )
                )
    rows[0].update(
        status="diverged", train_loss=np.nan, test_loss=np.nan, train_acc=np.nan, test_acc=np.nan, regime=None
    )
    rows[7].update(test_loss=np.nan)  # status ok but a non-finite metric: must be masked too
    return runs(rows)


def real_dynamics_case() -> tuple[pd.DataFrame, pd.DataFrame]:
    """(real runs, real curves) of mnist at n 200, worked by hand, the runs' columns read from the
    curves by ``benign.real.records.summarise``. At eta 0.2: seed 1 peaks at epoch 3 (0.8),
    memorises its noisy rows at epoch 10 (0.7) and ends at 0.6; seed 2 peaks at epoch 1 (0.9) and
    has not memorised them by epoch 30 (censored). At eta 0.1: seed 1 memorises at epoch 1, before
    its peak at epoch 3 (0.85), and ends at 0.75; seed 2 failed. Two eta-0 runs; an eta-0.05 cell
    whose only run failed."""
    from benign.real.records import Record, summarise

    epochs = [0, 1, 3, 10, 30]
    test_acc = {(0.2, 1): [0.3, 0.5, 0.8, 0.7, 0.6], (0.2, 2): [0.3, 0.9, 0.8, 0.8, 0.7],
                (0.1, 1): [0.3, 0.6, 0.85, 0.8, 0.75], (0.1, 2): [0.3, 0.3, 0.3, 0.3, 0.3],
                (0.0, 1): [0.3, 0.6, 0.9, 0.9, 0.9], (0.0, 2): [0.3, 0.7, 0.8, 0.9, 0.9],
                (0.05, 1): [0.3, 0.3, 0.3, 0.3, 0.3]}  # fmt: skip
    noisy_acc = {(0.2, 1): [0.0, 0.2, 0.5, 1.0, 1.0], (0.2, 2): [0.0, 0.1, 0.2, 0.5, 0.9],
                 (0.1, 1): [0.0, 1.0, 1.0, 1.0, 1.0], (0.1, 2): [0.0] * 5, (0.05, 1): [0.0] * 5}  # fmt: skip
    failed = {(0.1, 2), (0.05, 1)}
    runs, curves = [], []
    for (eta, seed), acc in test_acc.items():
        run_id = f"mnist_eta{eta}_seed{seed}"
        noisy = noisy_acc.get((eta, seed), [float("nan")] * 5)
        records = [Record(e, 1 - a, a, min(1.0, 0.5 + e / 20), f) for e, a, f in zip(epochs, acc, noisy)]
        n_noisy = 0 if eta == 0 else 40
        runs.append(dict(run_id=run_id, eta=eta, seed=seed, n_noisy=n_noisy, test_acc=acc[-1], reinit_test_acc=acc[0],
                         finetune_epochs=30, status="failed" if (eta, seed) in failed else "ok",
                         **summarise(records, n_noisy)))  # fmt: skip
        curves += [dict(run_id=run_id, dataset="mnist", n=200, eta=eta, seed=seed, epoch=r.epoch, test_loss=r.test_loss,
                        test_acc=r.test_acc, train_acc_clean=r.train_acc_clean, train_acc_noisy=r.train_acc_noisy)
                   for r in records]  # fmt: skip
    real = [{**REAL_RUN_DEFAULTS, "run_id": r["run_id"], **r} for r in runs]
    return conform(real, real_schema.REAL_RUNS), conform(curves, real_schema.REAL_CURVES)
