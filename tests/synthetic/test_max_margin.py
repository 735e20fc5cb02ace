"""The attention-SVM solver (benign.synthetic.max_margin) against closed forms, a generic QP solver, Tarzanagh et
al.'s single-input example, and the p-only trainer's gradient descent on that example."""

import math

import numpy as np
import pytest
import scipy.optimize
import torch
import torch.nn.functional as F

from benign.synthetic import models, registry
from benign.synthetic.max_margin import difference_operator, margins_from_scores, selection, svm_direction_from_gram
from benign.synthetic.models.batch_data import BatchData
from tests.helpers.svm import cosine_from_gram, svm_direction

# Tarzanagh et al.'s single input (ucr-optml/max_margin_attention,
# MaxMarginTokenSelection/single_input_converge.ipynb, g_converge=True): rows are tokens, the third
# coordinate is the token's score gamma_t = <x_t, v> with v = e_3, label y = +1.
TOY = np.array([[-0.1, 1.0, 1.0], [1.0, 0.0, 0.9], [0.0, 0.0, 0.9]])
# W = I, token 1 selected: d_2 = k_1 - k_2 = (-1.1, 1, 0.1), d_3 = k_1 - k_3 = (-0.1, 1, 0.1).
# With d_3 alone active, p = d_3 / ||d_3||^2 = (-0.1, 1, 0.1) / 1.02; then d_2^T p = 1.12 / 1.02 > 1,
# so p is feasible and KKT holds with alpha = (0, 1 / 1.02) >= 0: it is p^mm, ||p^mm||^2 = 1 / 1.02.
TOY_PMM = np.array([-0.1, 1.0, 0.1]) / 1.02
# Token 2 selected (the notebook's local direction): k_2 - k_1 = (1.1, -1, -0.1), k_2 - k_3 = (1, 0, 0);
# p = (1, 0, 0) meets the second with equality and gives 1.1 on the first.
TOY_LOCAL = np.array([1.0, 0.0, 0.0])


def _constraints(K, selected):
    """A (m x d), rows k_{i, a_i} - k_{i, t} for t != a_i, built directly from the keys."""
    n, T, _ = K.shape
    return np.array([K[i, selected[i]] - K[i, t] for i in range(n) for t in range(T) if t != selected[i]])


def _qp(A):
    """min 1/2 ||p||^2 s.t. A p >= 1 by SLSQP, the generic reference."""
    res = scipy.optimize.minimize(
        lambda p: 0.5 * p @ p, np.zeros(A.shape[1]), jac=lambda p: p, method="SLSQP",
        constraints=[{"type": "ineq", "fun": lambda p: A @ p - 1.0, "jac": lambda p: A}],
        options={"ftol": 1e-12, "maxiter": 1000},
    )  # fmt: skip
    assert res.success, res.message
    return res.x


def _gram(K):
    flat = K.reshape(-1, K.shape[-1])
    return flat, flat @ flat.T


def test_difference_operator_rows():
    D = difference_operator(3, [1, 0])
    expected = [[-1, 1, 0, 0, 0, 0], [0, 1, -1, 0, 0, 0], [0, 0, 0, 1, -1, 0], [0, 0, 0, 1, 0, -1]]
    np.testing.assert_array_equal(D, expected)


def test_hand_solved_one_constraint():
    # T = 2: one constraint d^T p >= 1 with d = k_1 - k_2 = (2, -1); p^mm = d / ||d||^2 = (0.4, -0.2),
    # alpha = 1 / ||d||^2 = 0.2.
    K = np.array([[[3.0, 1.0], [1.0, 2.0]]])
    flat, G = _gram(K)
    c, alpha = svm_direction_from_gram(G, 2, [0])
    np.testing.assert_allclose(flat.T @ c, [0.4, -0.2], rtol=0, atol=1e-12)
    np.testing.assert_allclose(alpha, [0.2], rtol=0, atol=1e-12)


def test_hand_solved_two_active_constraints():
    # d_2 = k_1 - k_2 = e_1, d_3 = k_1 - k_3 = e_2: both bind, p^mm = e_1 + e_2 with alpha = (1, 1);
    # the shared third coordinate cancels in every difference, so p^mm has none of it.
    K = np.array([[[1.0, 1.0, 5.0], [0.0, 1.0, 5.0], [1.0, 0.0, 5.0]]])
    p = svm_direction(K, [0])
    np.testing.assert_allclose(p, [1.0, 1.0, 0.0], rtol=0, atol=1e-12)
    _, alpha = svm_direction_from_gram(_gram(K)[1], 3, [0])
    np.testing.assert_allclose(alpha, [1.0, 1.0], rtol=0, atol=1e-12)
    assert p @ p == pytest.approx(alpha.sum(), abs=1e-12)  # ||p^mm||^2 = 1^T alpha


def test_tarzanagh_single_input_svm():
    c, alpha = svm_direction_from_gram(TOY @ TOY.T, 3, [0])
    np.testing.assert_allclose(TOY.T @ c, TOY_PMM, rtol=0, atol=1e-12)
    np.testing.assert_allclose(alpha, [0.0, 1 / 1.02], rtol=0, atol=1e-12)
    np.testing.assert_allclose(svm_direction(TOY[None], [1]), TOY_LOCAL, rtol=0, atol=1e-12)
    # The notebook's attention uses W = key^T query = diag(1, 1, 0): keys are the first two coordinates.
    # By the same argument p^mm = (-0.1, 1) / 1.01 and, selecting token 2, (1, 0); its cvxopt output reads
    # 1/2 ||p||^2 = 4.9505e-01 and 5.0000e-01.
    keys = TOY[None, :, :2]
    p_global, p_local = svm_direction(keys, [0]), svm_direction(keys, [1])
    np.testing.assert_allclose(p_global, np.array([-0.1, 1.0]) / 1.01, rtol=0, atol=1e-12)
    np.testing.assert_allclose(p_local, [1.0, 0.0], rtol=0, atol=1e-12)
    assert 0.5 * p_global @ p_global == pytest.approx(0.5 / 1.01, abs=1e-12)  # 0.495049...


@pytest.mark.parametrize("n, T, d, seed", [(3, 4, 20, 0), (3, 4, 20, 1), (10, 5, 8, 2)])
def test_matches_generic_qp_and_kkt(n, T, d, seed):
    rng = np.random.default_rng(seed)
    K = rng.standard_normal((n, T, d))
    if n * (T - 1) <= d:
        selected = rng.integers(0, T, n)  # fewer constraints than dimensions: any selection separates
    else:
        selected = selection(K @ rng.standard_normal(d))  # the tokens a fixed p selects are separable
    flat, G = _gram(K)
    c, alpha = svm_direction_from_gram(G, T, selected)
    p = flat.T @ c
    A = _constraints(K, selected)
    p_ref = _qp(A)
    np.testing.assert_allclose(p, p_ref, rtol=1e-5, atol=1e-7 * np.linalg.norm(p_ref))
    margin = A @ p
    active = alpha > 1e-8
    assert margin.min() >= 1 - 1e-8  # primal feasibility
    assert margin.min() == pytest.approx(1.0, abs=1e-8)
    np.testing.assert_allclose(margin[active], 1.0, atol=1e-8)  # complementary slackness
    assert np.all(alpha >= 0) and active.any()
    np.testing.assert_allclose(A.T @ alpha, p, atol=1e-10)  # stationarity: p = A^T alpha
    assert p @ p == pytest.approx(alpha.sum(), rel=1e-9)
    scores = K @ p
    np.testing.assert_array_equal(selection(scores), selected)
    assert margins_from_scores(scores, selected).min() == pytest.approx(1.0, abs=1e-8)


def test_gram_route_equals_explicit_and_is_rotation_invariant():
    rng = np.random.default_rng(5)
    K = rng.standard_normal((4, 3, 12))
    selected = np.array([0, 2, 1, 1])
    flat, G = _gram(K)
    c, _ = svm_direction_from_gram(G, 3, selected)
    np.testing.assert_allclose(svm_direction(K, selected), flat.T @ c, rtol=1e-12, atol=1e-14)
    Q, _ = np.linalg.qr(rng.standard_normal((12, 12)))  # keys K Q^T have the same Gram, p^mm maps to Q p^mm
    np.testing.assert_allclose(svm_direction(K @ Q.T, selected), Q @ (flat.T @ c), rtol=1e-9, atol=1e-12)
    c2 = rng.standard_normal(c.size)
    cos = (flat.T @ c) @ (flat.T @ c2) / np.linalg.norm(flat.T @ c) / np.linalg.norm(flat.T @ c2)
    assert cosine_from_gram(G, c, c2) == pytest.approx(cos, rel=1e-12)


def test_margins_and_selection_by_hand():
    scores = np.array([[3.0, 1.0, 2.5], [0.0, -1.0, 4.0]])
    np.testing.assert_array_equal(selection(scores), [0, 2])
    np.testing.assert_allclose(margins_from_scores(scores, [0, 2]), [0.5, 4.0])
    np.testing.assert_allclose(margins_from_scores(scores, [1, 0]), [-2.0, -4.0])  # not the argmax: negative


def test_inseparable_selections_raise():
    same = np.array([[[1.0, 2.0], [1.0, 2.0], [0.0, 1.0]]])  # tokens 1 and 2 coincide: 0 >= 1 for one row
    with pytest.raises(ValueError, match=r"not separable.*samples \[0\]"):
        svm_direction(same, [0])
    two = np.stack([TOY, TOY])  # one input, two selections: (k_1 - k_2)^T p >= 1 and <= -1
    with pytest.raises(ValueError, match=r"not separable.*samples \[0, 1\]"):
        svm_direction(two, [0, 1])
    with pytest.raises(ValueError, match="T >= 2"):
        svm_direction_from_gram(np.eye(2), 1, [0, 0])


# -- the p-only trainer on Tarzanagh et al.'s example ---------------------------------------------------
# The trainer's tokens are noise + signal on e_1, e_2 and its score is <x, nu>, nu = (e_1 - e_2) / sqrt(2)
# for a unit signal norm. Feeding it x' = R x with R orthogonal, R e_3 = nu, keeps the scores
# (<R x, R e_3> = x_3) and, with W = I, the logits: softmax(X' p') = softmax(X p) for p' = R p. So p(t)
# is R^T p'(t), and since G = X' X'^T = X X^T its coefficients c(t) (p' = X'^T c) are those of p = X^T c.
_S = 1 / math.sqrt(2)
ROT = np.array([[_S, 0.0, _S], [_S, 0.0, -_S], [0.0, 1.0, 0.0]])  # columns R e_1, R e_2 = e_3, R e_3 = nu


def _toy_batch(lr):
    tokens = torch.tensor(TOY @ ROT.T)[None]  # (n=1, T=3, d=3) rotated
    data = BatchData(
        noise=tokens, noise_test=tokens.clone(), y_true=torch.ones(1, dtype=torch.float64),
        y_test=torch.ones(1, dtype=torch.float64), noisy=torch.zeros(1, 1, dtype=torch.bool),
        coef=torch.zeros(1, 1, 3, 2, dtype=torch.float64), coef_test=torch.zeros(1, 1, 3, 2, dtype=torch.float64),
        signal_norms=torch.ones(1, dtype=torch.float64), d=3,
    )  # fmt: skip
    name = "token_p_identity"
    return models.module(name).Batch(data, lrs=[lr], seed=0, **registry.model(name).options)


def test_toy_trainer_matches_dense_model():
    lr, steps = 0.5, 30
    model = _toy_batch(lr)
    assert np.allclose(ROT.T @ ROT, np.eye(3)) and np.allclose(ROT[:, 2], [_S, -_S, 0])
    np.testing.assert_allclose(model.r[0].numpy(), TOY[:, 2], atol=1e-15)  # scores are the third coordinate
    X = torch.tensor(TOY)
    p = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    for step in range(steps):
        f_ref = torch.softmax(X @ p, -1) @ X[:, 2]  # v^T X^T softmax(X W p), v = e_3, W = I
        loss_ref = F.softplus(-f_ref)  # log(1 + exp(-y f)), y = +1
        f, _ = model.step()
        assert f[0, 0].item() == pytest.approx(f_ref.item(), rel=1e-12), step
        assert F.softplus(-f[0, 0]).item() == pytest.approx(loss_ref.item(), rel=1e-12), step
        (g,) = torch.autograd.grad(loss_ref, [p])
        with torch.no_grad():
            p -= lr * g
    p_rot = model.parameters(0)[1].numpy()
    np.testing.assert_allclose(ROT.T @ p_rot, p.detach().numpy(), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(TOY.T @ model.c[0].numpy(), p.detach().numpy(), rtol=1e-10, atol=1e-14)
    assert p.detach().norm() > 1e-2


def test_toy_gradient_descent_converges_to_pmm():
    # Gradient descent with a constant step. ||p(t)|| grows like log t and the direction approaches p^mm
    # slowly: the off-p^mm part of p stays bounded, so 1 - cos falls like 1 / log^2 t.
    # single_input_converge.ipynb plots such paths (its W = diag(1, 1, 0), normalised steps, six starts):
    # all run parallel to the p^mm ray of token 1, none turns to the local direction of token 2.
    G = TOY @ TOY.T
    c_mm, _ = svm_direction_from_gram(G, 3, [0])
    np.testing.assert_allclose(TOY.T @ c_mm, TOY_PMM, atol=1e-12)
    model = _toy_batch(100.0)
    checkpoints = [10**k for k in range(1, 6)]
    cos, norm = [], []
    for k in range(1, checkpoints[-1] + 1):
        model.step()
        if k in checkpoints:
            c = model.c[0].numpy()
            cos.append(cosine_from_gram(G, c, c_mm))
            norm.append(float(np.sqrt(c @ G @ c)))
    assert np.all(np.diff(cos) > 0) and np.all(np.diff(norm) > 0)
    assert cos[2] > 0.975 and cos[-1] > 0.985  # 0.9790, 0.9847, 0.9884 at 10^3, 10^4, 10^5 steps
    p = TOY.T @ model.c[0].numpy()
    assert selection(TOY @ p) == 0
    assert p @ TOY_LOCAL / np.linalg.norm(p) < 0  # not the local direction
    # Further along the same path: once the loss is flat a step may grow with the elapsed time
    # tau = sum of steps (the curvature falls like 1 / tau), so chunks of 1000 steps with
    # steps 10^3 ... 10^7 carry tau from 10^7 to about 10^10, continuing from the checkpoint.
    for lr in [1e3, 1e4, 1e5, 1e6, 1e7]:
        state = model.state()
        model = _toy_batch(lr)
        model.load_state(state)
        for _ in range(1000):
            model.step()
        c = model.c[0].numpy()
        cos.append(cosine_from_gram(G, c, c_mm))
    assert np.all(np.diff(cos) > 0)
    assert cos[-1] > 0.99  # 0.9942 at tau ~ 1.1e10
