"""The alignment record (benign.synthetic.max_margin_alignment) against the same numbers computed from the
materialised parameters and keys in d dimensions (tests/helpers/svm.py: svm_direction)."""

import numpy as np
import pytest

from benign.plan import ConfigError, validate
from benign.plan import jobs as plan
from benign.plan.config_values import read
from benign.synthetic import max_margin_alignment, models
from benign.synthetic.max_margin import margins_from_scores, selection
from benign.synthetic.schema import ALIGNMENT
from tests.helpers.svm import svm_direction

N, T, D, STEPS, N_TEST = 10, 4, 60, 200, 40
RUNS = [dict(n=N, T=T, d=D, sigma=1.0, rho=0.1, eta=0.2, lr=0.05, n_test=N_TEST, seed=3, steps=STEPS, setting=f"m{m}",
             signal_norm=m) for m in (3.0, 8.0)]  # fmt: skip


@pytest.mark.parametrize("name", ["token_p_w0", "token_p_identity", "token"])
def test_the_recorded_alignment_equals_the_explicit_computation(name):
    runs = [dict(r, model=name) for r in RUNS]
    frame = max_margin_alignment.track_batch(name, runs, STEPS, log_points=5)
    assert list(frame.columns) == ALIGNMENT.names and sorted(frame["step"].unique())[-1] == STEPS
    # the same runs, trained again and materialised at the end
    model = models.build(name, n=N, T=T, d=D, sigma=1.0, n_test=N_TEST, seed=3, signal_norms=[3.0, 8.0],
                         rhos=[0.1, 0.1], etas=[0.2, 0.2], lrs=[0.05, 0.05])  # fmt: skip
    for _ in range(STEPS):
        model.step()
    last = frame[frame["step"] == STEPS].reset_index(drop=True)
    for b in range(2):
        W, p = (t.numpy() for t in model.parameters(b))
        X = model.E.clone()
        X[:, :2] += model.Mc[b]
        X = X.numpy()
        # W fixed: the direction p over keys W^T x; W trained: the query W p over the raw tokens
        direction, keys = (W @ p, X) if name == "token" else (p, X @ W)
        scores = (keys @ direction).reshape(N, T)
        a = selection(scores)
        p_mm = svm_direction(keys.reshape(N, T, D), a)
        cosine = direction @ p_mm / np.linalg.norm(direction) / np.linalg.norm(p_mm)
        row = last.iloc[b]
        assert row["cosine"] == pytest.approx(cosine, rel=1e-8)
        assert row["svm_norm"] == pytest.approx(np.linalg.norm(p_mm), rel=1e-8)
        assert row["direction_norm"] == pytest.approx(np.linalg.norm(direction), rel=1e-9)
        ratio = margins_from_scores(scores, a).min() / np.linalg.norm(direction) * np.linalg.norm(p_mm)
        assert row["margin_ratio"] == pytest.approx(ratio, rel=1e-8)
        # the baselines: the relevant tokens' mean key, and the SVM direction of the step-1 selection
        relevant = keys.reshape(N, T, D)[:, 0].mean(0)
        assert row["cosine_relevant"] == pytest.approx(
            direction @ relevant / np.linalg.norm(direction) / np.linalg.norm(relevant), rel=1e-8
        )
        early = model_at_step_1(name, b)
        early_mm = svm_direction(early[1].reshape(N, T, D), selection((early[1] @ early[0]).reshape(N, T)))
        assert row["cosine_early"] == pytest.approx(
            direction @ early_mm / np.linalg.norm(direction) / np.linalg.norm(early_mm), rel=1e-7
        )
        assert -1 <= row["cosine_random"] <= 1
        # local optimality: the selected token's head score above every support token's
        y = model.y[b].numpy()
        gamma = y[:, None] * (X @ model_nu(model, b)).reshape(N, T)
        margins = keys.reshape(N, T, D) @ p_mm
        support = [[t for t in range(T) if t != a[i] and margins[i, a[i]] - margins[i, t] < 1 + 1e-6] for i in range(N)]
        share = np.mean([all(gamma[i, a[i]] > gamma[i, t] for t in support[i]) for i in range(N)])
        assert row["locally_optimal"] == pytest.approx(share)
        noisy = model.noisy[b].numpy()
        assert row["clean_signal"] == pytest.approx(np.mean(a[~noisy] == 0))
        assert row["noisy_opposite"] == pytest.approx(np.mean(a[noisy] == 2))
        assert row["noisy_noise"] == pytest.approx(np.mean(a[noisy] > 2))
        # the long-time label: each test sample read through its most-attended token under p^mm
        Xt = model.Et.clone()
        Xt[:, :2] += model.Mt[b]
        Xt = Xt.numpy().reshape(N_TEST, T, D)
        head = model.head_values("test")[b].numpy()
        query = p_mm if name == "token" else W @ p_mm  # the test keys are x (W trained) or W^T x
        svm_pick, own_pick = (Xt @ query).argmax(-1), (Xt @ (W @ p)).argmax(-1)
        y_test = model.y_test.numpy()
        rows = np.arange(N_TEST)
        assert row["test_err_hardmax"] == pytest.approx(np.mean(y_test * head[rows, own_pick] <= 0))
        if name == "token":  # W trains: the keys move, so p^mm over fixed keys gives no long-time label
            assert np.isnan(row["test_err_svm"]) and np.isnan(row["test_svm_agreement"])
        else:
            assert row["test_err_svm"] == pytest.approx(np.mean(y_test * head[rows, svm_pick] <= 0))
            assert row["test_svm_agreement"] == pytest.approx(np.mean(svm_pick == own_pick))
    assert (last["cosine"] > 0.5).all()  # trained towards the SVM direction, not orthogonal to it


def model_at_step_1(name: str, b: int) -> tuple[np.ndarray, np.ndarray]:
    """(direction, keys) of run b after one step, materialised."""
    model = models.build(name, n=N, T=T, d=D, sigma=1.0, n_test=2, seed=3, signal_norms=[3.0, 8.0],
                         rhos=[0.1, 0.1], etas=[0.2, 0.2], lrs=[0.05, 0.05])  # fmt: skip
    model.step()
    W, p = (t.numpy() for t in model.parameters(b))
    X = model.E.clone()
    X[:, :2] += model.Mc[b]
    X = X.numpy()
    return (W @ p, X) if name == "token" else (p, X @ W)


def model_nu(model, b: int) -> np.ndarray:
    """The fixed head nu = (e_1 - e_2) / (sqrt 2 ||mu||) of run b."""
    nu = np.zeros(D)
    norm = float(model.Mc[b].abs().max())  # the relevant token's coefficient is ||mu||
    nu[0], nu[1] = 1 / (np.sqrt(2) * norm), -1 / (np.sqrt(2) * norm)
    return nu


def test_the_config_block_is_planned_and_checked():
    cfg = {"synthetic": {"defaults": dict(n=20, T=8, rho=0.1, eta=0.2, sigma=1.0, lr=0.005, n_test=1000, steps=1000)},
           "max_margin": dict(model="token_p_w0", paper_model="token", paper_seeds=[42], seeds=[1, 2], steps=500,
                              log_points=5, horizons=[100, 500], settings={"benign": {"d": 200, "signal_norm": 20}},
                              snr_sweep={"d": 200, "signal_norm": [5, 40]})}  # fmt: skip
    runs = plan.max_margin_runs(read(cfg))
    assert [len(runs["token_p_w0"]), len(runs["token"])] == [6, 1]
    assert {r["setting"] for r in runs["token_p_w0"]} == {"benign", "snr_5", "snr_40"}
    assert runs["token"][0]["seed"] == 42 and runs["token"][0]["lr"] == 0.005
    validate.check_config(read(cfg))
    validate.check_runs([], runs)  # the planned runs pass; the checks refuse what follows
    with pytest.raises(ConfigError, match=r"max_margin.horizons = \[100, 900\]: past its 500 steps"):
        validate.check_config(read({**cfg, "max_margin": {**cfg["max_margin"], "horizons": [100, 900]}}))
    bad = {**cfg["max_margin"], "settings": {"benign": {"d": 200, "signal_norm": -1}}}
    with pytest.raises(ConfigError, match="signal_norm = -1"):
        validate.check_runs([], plan.max_margin_runs(read({**cfg, "max_margin": bad})))
    assert plan.max_margin_runs(read({"synthetic": cfg["synthetic"]})) == {}
