"""Figure 1's computation (docs/artifacts.md#figure-1-token-projection): token selection by a hand-set query, no training.

With W = I the attention logits of sample X are X p, where

    p = mu_{+1} + mu_{-1} + lambda * sum_i eps_i,

and eps_i is the noise of the token sample i should select: token 2 (weakly relevant,
opposite class, so it agrees with the flipped label) for a noisy sample, token 0
(relevant) for a clean one. A large lambda memorises the training noise (harmful), a
small one leaves only the signal (not overfitting), in between is benign. The model is
f(X) = sum_t softmax(X p)_t <x_t, nu>, predicting sign f(X).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import torch

from benign.synthetic.data_model import DataSpec, SyntheticData, class_signals, generate, signal_coefficients

FIGURE1_DATA = DataSpec(n=100, T=8, d=10000, rho=0.2, signal_norm=20.0, eta=0.2, n_test=100, seed=42)
FIGURE1_LAMBDAS = {"harmful": 1.0, "benign": 0.06, "not_overfitting": 0.001}


def target_tokens(noisy: torch.Tensor) -> torch.Tensor:
    """Index of the token each training sample should select: 2 if its label is flipped, else 0."""
    return torch.where(noisy, 2, 0)


def selected_noise_sum(data: SyntheticData) -> torch.Tensor:
    """sum_i eps_i over training samples, eps_i the noise of sample i's target token (d,)."""
    cfg = data.config
    rows = torch.arange(cfg.n)
    cols = target_tokens(data.noisy)
    tokens = data.X_train[rows, cols].clone()
    coef = signal_coefficients(data.y_true, cfg.T, cfg.rho, cfg.signal_norm)[rows, cols]
    tokens[:, :2] -= coef  # the signal lives in coordinates 0 and 1 only
    return tokens.sum(0)


def hand_set_query(data: SyntheticData, lam: float) -> torch.Tensor:
    """p = mu_{+1} + mu_{-1} + lambda * sum_i eps_i (d,)."""
    mu_pos, mu_neg = class_signals(data.config.d, data.config.signal_norm)
    return mu_pos + mu_neg + lam * selected_noise_sum(data)


def _split_frame(X: torch.Tensor, y: torch.Tensor, y_true: torch.Tensor, noisy: torch.Tensor, p, nu) -> pd.DataFrame:
    attn = torch.softmax(X @ p, dim=-1)  # (N, T)
    f = (attn * (X @ nu)).sum(-1)
    prediction = torch.where(f > 0, 1.0, -1.0)
    selected = attn.argmax(-1)
    token = X[torch.arange(X.shape[0]), selected]
    return pd.DataFrame(
        {
            "sample": np.arange(X.shape[0]),
            "selected_token": selected.numpy(),
            "proj_neg": token[:, 1].numpy(),  # <x_sel, mu_{-1} / ||mu||>
            "proj_pos": token[:, 0].numpy(),  # <x_sel, mu_{+1} / ||mu||>
            "label_true": y_true.numpy().astype(int),
            "label": y.numpy().astype(int),  # the label accuracy is measured against
            "noisy": noisy.numpy(),
            "prediction": prediction.numpy().astype(int),
            "correct": (prediction == y).numpy(),
        }
    )


def token_projection(
    cfg: DataSpec = FIGURE1_DATA,
    lambdas: Mapping[str, float] = FIGURE1_LAMBDAS,
) -> pd.DataFrame:
    """One row per (setting, split, sample): the selected token (argmax of the softmax), its
    projections on the unit class directions, true and scored labels, noisy flag, prediction.

    Columns: setting, lam, split ("train"/"test"), sample, selected_token, proj_neg,
    proj_pos, label_true, label, noisy, prediction, correct. Training accuracy is against
    the noisy labels, test accuracy against the clean ones.
    """
    data = generate(cfg)
    test_clean = torch.zeros(cfg.n_test, dtype=torch.bool)
    frames = []
    for setting, lam in lambdas.items():
        p = hand_set_query(data, lam)
        for split, X, y, y_true, noisy in (
            ("train", data.X_train, data.y_train, data.y_true, data.noisy),
            ("test", data.X_test, data.y_test, data.y_test, test_clean),
        ):
            frame = _split_frame(X, y, y_true, noisy, p, data.nu)
            frame.insert(0, "split", split)
            frame.insert(0, "lam", float(lam))
            frame.insert(0, "setting", setting)
            frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def projection_accuracy(points: pd.DataFrame) -> pd.DataFrame:
    """Train and test accuracy per setting (columns setting, lam, train_acc, test_acc), settings in input order."""
    acc = points.groupby(["setting", "lam", "split"], sort=False)["correct"].mean().unstack("split")
    return (
        acc.rename(columns={"train": "train_acc", "test": "test_acc"})[["train_acc", "test_acc"]]
        .reset_index()
        .rename_axis(columns=None)
    )


def projection_config(cfg: Mapping) -> tuple[DataSpec, dict[str, float]]:
    """Figure 1's data set and lambdas from the workflow's ``synthetic.projection`` config block."""
    data = {k: v for k, v in cfg.items() if k != "lambdas"}
    return DataSpec(**data), {k: float(v) for k, v in cfg["lambdas"].items()}
