"""The alignment record (benign.svm_alignment) against the same numbers computed from the
materialised parameters and keys in d dimensions (benign.max_margin.svm_direction)."""

import numpy as np
import pytest

from benign import models, svm_alignment
from benign.config import ConfigError, plan
from benign.max_margin import margins_from_scores, selection, svm_direction
from benign.schema import ALIGNMENT

N, T, D, STEPS = 10, 4, 60, 200
RUNS = [dict(n=N, T=T, d=D, sigma=1.0, rho=0.1, eta=0.2, lr=0.05, n_test=2, seed=3, steps=STEPS, setting=f"m{m}",
             signal_norm=m) for m in (3.0, 8.0)]  # fmt: skip


@pytest.mark.parametrize("name", ["token_p_w0", "token_p_identity", "token"])
def test_the_recorded_alignment_equals_the_explicit_computation(name):
    runs = [dict(r, model=name) for r in RUNS]
    frame = svm_alignment.track_batch(name, runs, STEPS, log_points=5)
    assert list(frame.columns) == ALIGNMENT.names and sorted(frame["step"].unique())[-1] == STEPS
    # the same runs, trained again and materialised at the end
    model = models.build(name, n=N, T=T, d=D, sigma=1.0, n_test=2, seed=3, signal_norms=[3.0, 8.0],
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
        noisy = model.noisy[b].numpy()
        assert row["clean_signal"] == pytest.approx(np.mean(a[~noisy] == 0))
        assert row["noisy_opposite"] == pytest.approx(np.mean(a[noisy] == 2))
        assert row["noisy_noise"] == pytest.approx(np.mean(a[noisy] > 2))
    assert (last["cosine"] > 0.5).all()  # trained towards the SVM direction, not orthogonal to it


def test_the_config_block_is_planned_and_checked():
    cfg = {"synthetic": {"defaults": dict(n=20, T=8, rho=0.1, eta=0.2, sigma=1.0, lr=0.005, n_test=1000, steps=1000)},
           "max_margin": dict(model="token_p_w0", paper_model="token", paper_seeds=[42], seeds=[1, 2], steps=500,
                              log_points=5, horizons=[100, 500], settings={"benign": {"d": 200, "signal_norm": 20}},
                              snr_sweep={"d": 200, "signal_norm": [5, 40]})}  # fmt: skip
    runs = plan.max_margin_runs(cfg)
    assert [len(runs["token_p_w0"]), len(runs["token"])] == [6, 1]
    assert {r["setting"] for r in runs["token_p_w0"]} == {"benign", "snr_5", "snr_40"}
    assert runs["token"][0]["seed"] == 42 and runs["token"][0]["lr"] == 0.005
    with pytest.raises(ConfigError, match=r"max_margin.horizons = \[100, 900\]: past its 500 steps"):
        plan.max_margin_runs({**cfg, "max_margin": {**cfg["max_margin"], "horizons": [100, 900]}})
    bad = {**cfg["max_margin"], "settings": {"benign": {"d": 200, "signal_norm": -1}}}
    with pytest.raises(ConfigError, match="signal_norm = -1"):
        plan.max_margin_runs({**cfg, "max_margin": bad})
    assert plan.max_margin_runs({"synthetic": cfg["synthetic"]}) == {}
