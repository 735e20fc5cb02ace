"""The Gram engine (benign.synthetic.gram) is exact: fed the coordinates of an explicit draw it
gives the explicit trajectory; its sampled Gram matrices have the explicit Gaussian
construction's law; and its runs end as the explicit engine's do, in distribution."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import stats

from benign.analysis.theory import Criteria, assign_regimes
from benign.plan.schema import default
from benign.synthetic import gram
from benign.synthetic.models import build, token_selection
from benign.synthetic.models.batch_data import BatchData, batch_data
from benign.synthetic.trainer import RunSpec, train_runs


def gaussian_W(d: int, seed: int) -> torch.Tensor:
    """The explicit construction the Gram engine samples in law: W0 with i.i.d. N(0, 1/(3d)) entries."""
    g = torch.Generator().manual_seed(10_000 + seed)
    return torch.randn(d, d, generator=g, dtype=torch.float64) / math.sqrt(3 * d)


def orthonormal(U: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """QR with a positive diagonal, so that the basis of (e_1, e_2, ...) starts with e_1, e_2."""
    Q, R = torch.linalg.qr(U)
    signs = torch.sign(torch.diagonal(R))
    return Q * signs, R * signs[:, None]


def coordinates(E: torch.Tensor, Et: torch.Tensor, W0: torch.Tensor):
    """An explicit draw in the Gram engine's coordinates (the basis of benign.synthetic.gram, built
    by QR from the draw itself): training noise (N, 2m), test noise (Nt, 2m), W0 on the span (2m, m)."""
    d = E.shape[1]
    e12 = torch.eye(d, dtype=torch.float64)[:, :2]
    Phi, _ = orthonormal(torch.cat([e12, E.T], dim=1))
    Psi, _ = orthonormal(W0.T @ Phi)
    Xi, _ = orthonormal(W0 @ Psi - Phi @ (Phi.T @ W0 @ Psi))
    basis = torch.cat([Phi, Xi], dim=1)
    return E @ basis, Et @ basis, basis.T @ W0 @ Psi


@pytest.mark.parametrize("W", token_selection.W_FORMS)
def test_fed_the_explicit_draw_the_gram_engine_gives_its_trajectory(W, monkeypatch):
    n, T, d, n_test, seed = 4, 3, 64, 6, 3
    kw = dict(n=n, T=T, d=d, sigma=1.0, n_test=n_test, seed=seed, signal_norms=[2.0, 5.0], rhos=[0.1, 0.3],
              etas=[0.25, 0.5])  # fmt: skip
    explicit = batch_data(**kw)
    W0 = gaussian_W(d, seed)
    E, Et = explicit.noise.reshape(n * T, d), explicit.noise_test.reshape(n_test * T, d)
    Ec, Etc, Wc = coordinates(E, Et, W0)
    assert torch.allclose(Ec[:, :2], E[:, :2]) and torch.allclose(Ec @ Ec.T, E @ E.T)
    D = gram.dimension(n, T)
    fed = BatchData(**{**explicit.__dict__, "noise": Ec.reshape(n, T, D), "noise_test": Etc.reshape(n_test, T, D),
                       "engine": "gram"})  # fmt: skip
    lrs = [0.5, 0.2]
    with monkeypatch.context() as m:
        m.setattr(token_selection, "init_W", lambda d, seed: W0)
        a = token_selection.Batch(explicit, lrs=lrs, seed=seed, W=W)
    with monkeypatch.context() as m:
        m.setattr(gram, "init_W", lambda d, n, T, seed: Wc)
        b = token_selection.Batch(fed, lrs=lrs, seed=seed, W=W)
    for _ in range(300):
        fa, atta = a.step()
        fb, attb = b.step()
        torch.testing.assert_close(fb, fa, rtol=0, atol=1e-10)
        torch.testing.assert_close(attb, atta, rtol=0, atol=1e-10)
    for x, y in zip(b.outputs_test(attention=True), a.outputs_test(attention=True)):
        torch.testing.assert_close(x, y, rtol=0, atol=1e-10)
    torch.testing.assert_close(b.query_norm(), a.query_norm(), rtol=1e-10, atol=0)
    torch.testing.assert_close(b.key_gram("init"), a.key_gram("init"), rtol=0, atol=1e-10)
    assert a.c.abs().max() > 1e-2  # the trajectory went somewhere


def _statistics(batch) -> dict[str, float]:
    """Scalars of one draw's products (token_selection.Batch): entries of S and G, the signal
    corrections' W0 W0^T on e_1, e_2, the test side, and G's largest eigenvalue."""
    return {
        "S[0,0]": batch.EE[0, 0].item(), "S[0,1]": batch.EE[0, 1].item(),
        "G[0,0]": batch.EVE[0, 0].item(), "G[0,1]": batch.EVE[0, 1].item(), "G[1,2]": batch.EVE[1, 2].item(),
        "tr G / N": batch.EVE.trace().item() / batch.EVE.shape[0],
        "lambda_max(G)": torch.linalg.eigvalsh(batch.EVE)[-1].item(),
        "Q[0,0]": batch.Q2[0, 0].item(), "Q[0,1]": batch.Q2[0, 1].item(), "EQ[0,0]": batch.EQ[0, 0].item(),
        "Et V E[0,0]": batch.EtVE[0, 0].item(), "Et E[0,0]": batch.EtE[0, 0].item(),
        "|Et V E|^2 / Nt": (batch.EtVE**2).sum().item() / batch.EtVE.shape[0],
    }  # fmt: skip


def _draws(engine: str, draws: int, monkeypatch) -> dict[str, np.ndarray]:
    n, T, d = 2, 3, 40
    out: dict[str, list[float]] = {}
    with monkeypatch.context() as m:
        m.setattr(token_selection, "init_W", gaussian_W)
        for seed in range(draws):
            batch = build("token", n=n, T=T, d=d, sigma=1.0, n_test=2, seed=seed, signal_norms=[1.0], rhos=[0.1],
                          etas=[0.0], lrs=[0.1], engine=engine)  # fmt: skip
            for k, v in _statistics(batch).items():
                out.setdefault(k, []).append(v)
    return {k: np.array(v) for k, v in out.items()}


def test_the_sampled_grams_have_the_law_of_the_explicit_gaussian_construction(monkeypatch, capsys):
    draws = 600
    sampled, explicit = _draws("gram", draws, monkeypatch), _draws("explicit", draws, monkeypatch)
    d = 40
    # the first check: E[G] = E[X W0 W0^T X^T] = S / 3, so E[G_00] = E[S_00] / 3 = d / 3
    assert abs(sampled["G[0,0]"].mean() - d / 3) < 4 * sampled["G[0,0]"].std() / math.sqrt(draws)
    lines = []
    for name in sampled:
        a, b = sampled[name], explicit[name]
        z_mean = (a.mean() - b.mean()) / math.sqrt(a.var() / draws + b.var() / draws)
        # the standard error of a sample variance: sqrt((m4 - s^4) / draws)
        se = [math.sqrt(max(((x - x.mean()) ** 4).mean() - x.var() ** 2, 1e-300) / draws) for x in (a, b)]
        z_var = (a.var() - b.var()) / math.hypot(*se)
        lines.append(f"{name:>16}: mean {a.mean():9.4f} vs {b.mean():9.4f} (z {z_mean:+.2f}), "
                     f"var {a.var():10.4f} vs {b.var():10.4f} (z {z_var:+.2f})")  # fmt: skip
        assert abs(z_mean) < 4 and abs(z_var) < 4, lines[-1]
    with capsys.disabled():
        print("\n[gram] sampled against explicit Gaussian construction, d 40, n 2, T 3, 600 draws each:")
        print("\n".join(lines))


OUTCOMES = ("train_loss", "test_loss", "test_loss_normalised")
# the two settings below run 2 references x 3 outcomes each: 12 KS tests, held at a family-wise 1%
# (Bonferroni), so that a chance failure is as rare as one test's at 1%
KS_LEVEL = 0.01 / 12


def _finals(engine: str, d: int, c: float, seeds, monkeypatch, w0=None):
    """One run per seed at ||mu|| = c d^(1/4), where the harmful boundary lies at 400 steps (the
    runs fall on both sides of it)."""
    runs = [RunSpec(n=20, T=8, d=d, n_test=100, steps=400, lr=0.05, signal_norm=c * d**0.25, seed=seed, engine=engine)
            for seed in seeds]  # fmt: skip
    with monkeypatch.context() as m:
        if w0 is not None:
            m.setattr(token_selection, "init_W", w0)
        frame, _, _ = train_runs(runs, device="cpu")
    return assign_regimes(frame, Criteria(**default("synthetic.regime")))


@pytest.mark.parametrize("d, c", [(400, 1.5), (2000, 1.7)])
def test_runs_end_as_the_explicit_engines_do_in_distribution(d, c, monkeypatch, capsys):
    seeds = range(40)
    sampled = _finals("gram", d, c, seeds, monkeypatch)
    references = {
        "explicit, Gaussian W0": _finals("explicit", d, c, [1000 + s for s in seeds], monkeypatch, w0=gaussian_W),
        "explicit, uniform W0 (the paper's)": _finals("explicit", d, c, [2000 + s for s in seeds], monkeypatch),
    }
    lines = []
    for label, reference in references.items():
        for name in OUTCOMES:
            p = stats.ks_2samp(sampled[name].dropna(), reference[name].dropna()).pvalue  # r: NaN where undefined
            lines.append(f"d {d}, gram against {label}, {name}: KS p = {p:.3f}")
            assert p > KS_LEVEL, lines[-1]
        for regime in ("harmful", "benign", "not_overfitting"):
            a, b = (sampled.regime == regime).mean(), (reference.regime == regime).mean()
            pooled = (a + b) / 2
            se = math.sqrt(max(pooled * (1 - pooled), 1 / len(seeds)) * 2 / len(seeds))
            lines.append(f"d {d}, gram against {label}, share {regime}: {a:.3f} vs {b:.3f}")
            assert abs(a - b) <= 3 * se, lines[-1]
    assert sampled.engine.eq("gram").all() and sampled.regime.nunique() >= 2, sampled.regime.value_counts()
    with capsys.disabled():
        print("\n[gram] " + "\n[gram] ".join(lines))


def test_a_run_below_the_engines_minimum_d_is_refused_naming_d():
    from benign.plan import ConfigError
    from benign.plan.validate import check_run

    run = {**RunSpec().__dict__, "engine": "gram", "d": 300}  # n 20, T 8: the minimum is 324
    with pytest.raises(
        ConfigError, match=r"synthetic job x\.d = 300: the Gram engine .* needs d >= 2\(nT \+ 2\) = 324"
    ):
        check_run(run, "synthetic job x")
    check_run({**run, "d": 324}, "synthetic job x")
    with pytest.raises(ValueError, match="engine 'gram' does not apply to model 'encoder'"):
        RunSpec(model="encoder", mlp_dim=8, engine="gram")
    assert RunSpec(engine="auto", d=300).engine == "explicit" and RunSpec(engine="auto", d=324).engine == "gram"


def test_the_command_line_refuses_a_run_before_any_work(root):
    """A d below the Gram engine's minimum, and a d the explicit engine could not hold in this
    machine's memory (a d x d W0), are refused with status 2, naming the option and its value."""
    import subprocess
    import sys

    def run(*args):
        return subprocess.run([sys.executable, "-m", "benign", "synthetic", *args], cwd=root, capture_output=True,
                              text=True, timeout=120)  # fmt: skip

    small = run("--engine", "gram", "--d", "300")
    assert small.returncode == 2 and "--d = 300" in small.stderr and "324" in small.stderr, small.stderr
    huge = run("--d", "10000000")
    assert huge.returncode == 2 and "--d = 10000000" in huge.stderr and "--engine gram" in huge.stderr, huge.stderr


def test_the_lines_of_one_seed_are_independent_draws_across_d():
    """Lines at two d (or two n) of one seed share no random numbers: the training noise's
    coordinates on e_1, e_2, the test noise and W0 correlate no more than independent draws do.
    Under a stream keyed by the seed alone they would correlate at 1."""
    n, T, seed = 10, 8, 1
    (tr_a, te_a), (tr_b, te_b) = (gram.noise(n, T, d, 1.0, 50, seed) for d in (1_000, 10_000_000))
    _, te_c = gram.noise(20, T, 1_000, 1.0, 50, seed)
    W_a, W_b = (gram.init_W(d, n, T, seed) * math.sqrt(3 * d) for d in (1_000, 10_000_000))
    below = torch.tril(torch.ones(40, 40, dtype=torch.bool), diagonal=-1)  # W0's normal entries (Bartlett)
    pairs = [
        (tr_a[..., :2], tr_b[..., :2]),
        (te_a[..., :40], te_b[..., :40]),
        (te_a[..., :40], te_c[..., :40]),
        (W_a[:40, :40][below], W_b[:40, :40][below]),
    ]
    for x, y in pairs:
        x, y = x.flatten().numpy(), y.flatten().numpy()
        rho = np.corrcoef(x, y)[0, 1]
        assert abs(rho) < 4 / math.sqrt(x.size), (x.size, rho)  # 4 standard errors of a null correlation
