"""Selection metrics (benign/synthetic/selection.py) against hand-built attention, and the trainer's
selection columns against a direct float64 evaluation of the materialised model."""

import dataclasses
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from benign.synthetic import data_model as synthetic
from benign.synthetic import models, selection
from benign.synthetic.trainer import RunSpec, train_runs


def test_hand_built_attention():
    # T = 4: token 0 relevant, 1 weak true, 2 weak opposite, 3 irrelevant
    att = torch.tensor(
        [
            [
                [0.7, 0.1, 0.1, 0.1],  # relevant
                [0.1, 0.1, 0.6, 0.2],  # weak opposite
                [0.25, 0.25, 0.25, 0.25],  # a tie: no one token is selected
                [0.1, 0.1, 0.1, 0.7],  # irrelevant
            ]
        ],
        dtype=torch.float64,
    )
    out = selection.selection(att, T=4)
    assert out["sel_relevant"][0] == pytest.approx(1 / 4)
    assert out["sel_weak_opposite"][0] == pytest.approx(1 / 4) and out["sel_irrelevant"][0] == pytest.approx(1 / 4)
    assert out["sel_weak_true"][0] == 0.0
    assert out["att_relevant"][0] == pytest.approx((0.7 + 0.1 + 0.25 + 0.1) / 4)
    mask = torch.tensor([[True, True, False, False]])
    masked = selection.selection(att, T=4, mask=mask)
    assert masked["sel_relevant"][0] == pytest.approx(0.5) and masked["att_relevant"][0] == pytest.approx(0.4)
    assert math.isnan(selection.selection(att, T=4, mask=torch.zeros_like(mask))["sel_relevant"][0])


def test_an_extra_leading_entry_is_skipped():
    """The encoder's rows are [CLS] then the T tokens: [CLS] most attended selects no token."""
    att = torch.tensor([[[0.5, 0.3, 0.1, 0.1], [0.1, 0.2, 0.6, 0.1]]], dtype=torch.float64)  # T = 3
    out = selection.selection(att, T=3)
    assert out["sel_relevant"][0] == 0.0 and out["sel_weak_true"][0] == pytest.approx(0.5)
    assert out["att_relevant"][0] == pytest.approx((0.3 + 0.2) / 2)


def test_reference_losses_hand_worked():
    # two samples, T = 2: v = (v_0, v_1); labels +1, -1
    v = torch.tensor([[[1.0, -1.0], [-0.5, 2.0]]], dtype=torch.float64)
    y = torch.tensor([1.0, -1.0], dtype=torch.float64)
    out = selection.reference_losses(v, y)
    sel = (math.log1p(math.exp(-1.0)) + math.log1p(math.exp(-0.5))) / 2
    unif = (math.log1p(math.exp(0.0)) + math.log1p(math.exp(0.75))) / 2
    assert out["loss_selected"][0] == pytest.approx(sel) and out["loss_uniform"][0] == pytest.approx(unif)
    assert out["acc_uniform"][0] == 0.0  # a mean of 0 is no correct sign, and -1 * 0.75 < 0
    assert selection.normalised_loss(unif, sel, unif) == pytest.approx(1.0)
    assert selection.normalised_loss(sel, sel, unif) == pytest.approx(0.0)
    assert selection.normalised_loss((sel + unif) / 2, sel, unif) == pytest.approx(0.5)
    assert np.isnan(selection.normalised_loss(0.3, 0.5, 0.5))  # references that do not differ: no r


def direct(run: RunSpec, W: torch.Tensor, p: torch.Tensor) -> dict:
    """The selection metrics of one run with parameters (W, p), computed sample by sample on
    its materialised data in float64."""
    fields = [f.name for f in dataclasses.fields(synthetic.DataSpec)]
    data = synthetic.generate(synthetic.DataSpec(**{k: getattr(run, k) for k in fields}))
    out = {}
    for split, X, y in (("test", data.X_test, data.y_test), ("train", data.X_train, data.y_train)):
        losses, sel_losses, unif_losses, top, att0, unif_correct = [], [], [], [], [], []
        for i in range(X.shape[0]):
            scores = X[i] @ (W @ p)
            a = torch.softmax(scores, 0)
            v = X[i] @ data.nu
            losses.append(F.softplus(-y[i] * (a * v).sum()).item())
            sel_losses.append(F.softplus(-y[i] * v[0]).item())
            unif_losses.append(F.softplus(-y[i] * v.mean()).item())
            unif_correct.append(float(y[i] * v.mean() > 0))
            top.append(int(torch.argmax(a)))
            att0.append(a[0].item())
        out[split] = dict(loss=np.array(losses), sel=np.array(sel_losses), unif=np.array(unif_losses),
                          top=np.array(top), att0=np.array(att0), unif_correct=np.array(unif_correct))  # fmt: skip
    out["noisy"] = data.noisy.numpy()
    return out


def test_the_trainer_records_what_a_direct_evaluation_gives():

    run = RunSpec(n=10, T=4, d=30, n_test=40, signal_norm=6.0, eta=0.2, lr=0.05, steps=150, seed=3)
    runs, curves, _ = train_runs([run], device="cpu")
    # the trained parameters, materialised from a model stepped the same number of times
    model = models.build("token", n=10, T=4, d=30, sigma=1.0, n_test=40, seed=3, signal_norms=[6.0], rhos=[0.1],
                         etas=[0.2], lrs=[0.05], dtype=torch.float64)  # fmt: skip
    for _ in range(run.steps):
        model.step()
    W, p = model.parameters(0)
    ref = direct(run, W, p)
    last = curves[curves["step"] == run.steps].iloc[0]
    row = runs.iloc[0]
    test = ref["test"]
    assert row["test_loss_selected"] == pytest.approx(test["sel"].mean(), rel=1e-9)
    assert row["test_loss_uniform"] == pytest.approx(test["unif"].mean(), rel=1e-9)
    assert row["test_acc_uniform"] == pytest.approx(test["unif_correct"].mean())
    r = (test["loss"].mean() - test["sel"].mean()) / (test["unif"].mean() - test["sel"].mean())
    assert last["test_loss_normalised"] == pytest.approx(r, rel=1e-7)
    assert last["test_sel_relevant"] == pytest.approx((test["top"] == 0).mean())
    assert last["test_att_relevant"] == pytest.approx(test["att0"].mean(), rel=1e-9)
    train, noisy = ref["train"], ref["noisy"]
    clean = ~noisy
    assert last["train_clean_sel_relevant"] == pytest.approx((train["top"][clean] == 0).mean())
    assert last["train_clean_att_relevant"] == pytest.approx(train["att0"][clean].mean(), rel=1e-9)
    r_clean = (train["loss"][clean].mean() - train["sel"][clean].mean()) / (
        train["unif"][clean].mean() - train["sel"][clean].mean()
    )
    assert last["train_clean_loss_normalised"] == pytest.approx(r_clean, rel=1e-7)
    kinds = np.array([0, 1, 2, 3])[train["top"][noisy]]
    for k, name in enumerate(selection.KINDS):
        assert last[f"train_noisy_sel_{name}"] == pytest.approx((kinds == k).mean())
    first = curves[curves["step"] == 0].iloc[0]
    assert first["test_loss_normalised"] == pytest.approx(1.0)  # step 0: uniform attention
    assert first["test_sel_relevant"] == 0.0  # a tie selects no token
    assert last["test_att_relevant"] > first["test_att_relevant"]  # the check is not vacuous: attention moved
