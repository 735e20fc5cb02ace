"""The token-selection model (docs/model.md), trained exactly in a reduced space, many runs at once.

Model: f(X) = sum_t softmax(X W p)_t <x_t, nu>, with p (d) trained by full-batch gradient
descent on the mean logistic loss, nu fixed, and W (d x d) trained too (the paper's model,
``W="trained"``) or fixed at its initialisation W0 (``W="init"``) or at the identity
(``W="identity"``).

Why a reduced space is exact. With g = dL/ds (one entry per training token, s = X W p):
    grad_W = X^T g p^T            grad_p = W^T X^T g
Both updates stay in spans fixed at initialisation. Writing Y = W0^T X^T (d x N, N = n T),
    p_k = Y c_k                    W_k = W0 + X^T A_k Y^T
with c_k in R^N and A_k in R^{N x N}. Then W_k p_k = V c_k + X^T A_k G c_k, where
V = W0 W0^T X^T, G = X V = Y^T Y and S = X X^T, so every step is O(N^2) instead of O(d^2):
    logits   s_k   = G c_k + S h_k,     h_k = A_k G c_k
    c_{k+1}  = c_k - lr (g_k + A_k^T S g_k)
    A_{k+1}  = A_k - lr g_k c_k^T
With W fixed, A stays 0: the same program without its A update. Test logits are
X_test V c + X_test X^T h. The d-dimensional work is a handful of matrix products done once
per batch.

Runs in one batch share the token noise and W0 and differ in signal norm, rho, eta and lr.
Their tokens are noise + signal in the first two coordinates only, so the shared products are
computed once and each run adds rank-2 corrections (``Mc``: its tokens' coefficients on e_1,
e_2). G and S are never formed per run: G v and S v for every run are one product with the
shared noise matrix (B x N times N x N, where a per-run N x N matrix would be streamed from
memory B times) plus the runs' rank-2 corrections. Only A is per run.

Everything above is inner products, so the same program runs on the Gram engine's coordinates
(benign.synthetic.gram): d is then 2(N + 2) and W0 the (d, d / 2) matrix through which the
span's vectors see the Gaussian W0 of the d-dimensional model.
"""

from __future__ import annotations

import math

import torch

from benign.synthetic import data_model as synthetic
from benign.synthetic import gram
from benign.synthetic.models.batch_data import BatchData

CPU_DTYPE = torch.float64
W_FORMS = ("trained", "init", "identity")


def _mv(A: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """A @ x for every run: (B, N, N), (B, N) -> (B, N). Written as the row-vector product
    x^T A^T: MKL runs it up to several times faster than bmm(A, x[..., None]) (same products)."""
    return torch.bmm(x.unsqueeze(1), A.transpose(1, 2)).squeeze(1)


def _mvT(A: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """A^T @ x for every run, as the row-vector product x^T A."""
    return torch.bmm(x.unsqueeze(1), A).squeeze(1)


def init_W(d: int, seed: int) -> torch.Tensor:
    """W0 with entries U(-1/sqrt(d), 1/sqrt(d)), seeded (float64, CPU)."""
    bound = 1.0 / math.sqrt(d)
    g = synthetic.generator(seed, "init")
    return (torch.rand(d, d, generator=g, dtype=torch.float64) * 2 - 1) * bound


class Batch:
    """B runs of the token-selection model on one :class:`BatchData` (see the module docstring)."""

    def __init__(
        self, data: BatchData, *, lrs, seed: int, W: str = "trained", device: torch.device | str = "cpu",
        dtype: torch.dtype = CPU_DTYPE, w_dtype: str = "float64",
    ) -> None:  # fmt: skip
        if W not in W_FORMS:
            raise ValueError(f"W must be one of {W_FORMS}, got {W!r}")
        if w_dtype not in ("float64", "float32"):
            raise ValueError(f"w_dtype must be 'float64' or 'float32', got {w_dtype!r}")
        self.train_W = W == "trained"
        self.B, n, T, d = data.B, *data.noise.shape
        self.n, self.T, self.d, self.n_test = n, T, d, data.noise_test.shape[0]
        dev = torch.device(device)
        self.device, self.dtype = dev, dtype
        kw = dict(device=dev, dtype=dtype)

        E = data.noise.reshape(n * T, d).to(**kw)  # the token noise (A is the model's N x N correction)
        Et = data.noise_test.reshape(self.n_test * T, d).to(**kw)
        if W == "identity":
            W0 = torch.eye(d, dtype=torch.float64)
        elif data.engine == "gram":  # W0 on the span of the Gram engine's coordinates, (d, d / 2)
            W0 = gram.init_W(data.d, n, T, seed)
        else:
            W0 = init_W(d, seed)
        W0 = W0.to(**kw)
        self.W0, self.E, self.Et = W0, E, Et

        # Shared products (the only O(d^2) work).
        YE = E @ W0  # rows: (W0^T e_i)^T, (N, d)
        VEt = YE @ W0.T  # rows: (W0 W0^T e_i)^T, (N, d)
        Q = W0 @ W0[:2].T  # W0 W0^T restricted to e_1, e_2: (d, 2)
        self.YE, self.W0top = YE, W0[:2]  # kept to materialise W and p
        self.EVE = E @ VEt.T  # (N, N)
        self.EQ = E @ Q  # (N, 2)
        self.VE2 = VEt[:, :2].T  # (2, N)
        self.Q2 = Q[:2]  # (2, 2)
        self.EE = E @ E.T  # (N, N)
        self.E2 = E[:, :2]  # (N, 2)
        self.EtVE = Et @ VEt.T  # (Nt, N)
        self.EtQ = Et @ Q  # (Nt, 2)
        self.EtE = Et @ E.T  # (Nt, N)
        self.Et2 = Et[:, :2]  # (Nt, 2)

        # Per-run data.
        self.noisy = data.noisy  # (B, n) CPU
        self.y = data.y.to(**kw)  # labels trained on
        self.y_test = data.y_test.to(**kw)
        self.Mc = data.coef.reshape(self.B, n * T, 2).to(**kw)
        self.Mt = data.coef_test.reshape(self.B, self.n_test * T, 2).to(**kw)
        norms = data.signal_norms.to(**kw)
        self.lr = torch.tensor([float(lr) for lr in lrs], **kw)

        # <x, nu> for every token: nu = (e_1 - e_2) / sqrt(2) / ||mu||.
        X2 = self.E2 + self.Mc  # (B, N, 2): training tokens' first two coordinates
        Xt2 = self.Et2 + self.Mt
        self.r = (X2[..., 0] - X2[..., 1]) / (math.sqrt(2) * norms[:, None])
        self.r_test = (Xt2[..., 0] - Xt2[..., 1]) / (math.sqrt(2) * norms[:, None])

        self.c = torch.zeros(self.B, n * T, **kw)
        # A alone may be float32 (``w_dtype``): every step reads it several times and, at large
        # N, that traffic bounds a CPU step; its products come back in ``dtype``
        self.a_dtype = torch.float32 if w_dtype == "float32" else dtype
        self.A = torch.zeros(self.B, n * T, n * T, device=dev, dtype=self.a_dtype)
        self._spare, self._kept = None, None  # a kept step's buffer and c before it (step(keep=True))
        self._logits_of = None  # (c, the logits of that state)

    # -- the runs' G = X V and S = X X^T, applied to one vector per run ----------------------
    def _G(self, v: torch.Tensor) -> torch.Tensor:
        """G_b v_b for every run: G = EVE + EQ Mc^T + Mc VE2 + Mc Q2 Mc^T."""
        a = _mvT(self.Mc, v)  # Mc^T v, (B, 2)
        return v @ self.EVE.T + a @ self.EQ.T + _mv(self.Mc, v @ self.VE2.T + a @ self.Q2.T)

    def _S(self, v: torch.Tensor) -> torch.Tensor:
        """S_b v_b for every run: S = EE + E2 Mc^T + Mc E2^T + Mc Mc^T."""
        a = _mvT(self.Mc, v)
        return v @ self.EE.T + a @ self.E2.T + _mv(self.Mc, v @ self.E2 + a)

    # -- forward ---------------------------------------------------------------------------
    def _h(self, Gc: torch.Tensor) -> torch.Tensor:
        return self._A_mv(Gc)

    def _A_mv(self, v: torch.Tensor) -> torch.Tensor:
        """A_b v_b for every run, in A's precision, returned in the model's."""
        return _mv(self.A, v.to(self.a_dtype)).to(self.dtype)

    def _A_mvT(self, v: torch.Tensor) -> torch.Tensor:
        """A_b^T v_b for every run, in A's precision, returned in the model's."""
        return _mvT(self.A, v.to(self.a_dtype)).to(self.dtype)

    def _logits(self) -> torch.Tensor:
        """s = X W p of every training token, (B, N): computed once per state. The flow reads
        them after every step (benign.synthetic.flow) and the next step starts from them; a
        state is known by its c, which every step, undo and load replaces (never changes in place)."""
        if self._logits_of is not None and self._logits_of[0] is self.c:
            return self._logits_of[1]
        Gc = self._G(self.c)
        s = Gc + self._S(self._h(Gc)) if self.train_W else Gc  # h = A G c, and E = 0 with W fixed
        self._logits_of = (self.c, s)
        return s

    def _train_forward(self):
        s = self._logits()
        att = torch.softmax(s.view(self.B, self.n, self.T), dim=-1)
        f = (att * self.r.view(self.B, self.n, self.T)).sum(-1)
        return f, att

    def outputs_train(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(f on training samples (B, n), softmax over tokens (B, n, T))."""
        return self._train_forward()

    def outputs_test(self, attention: bool = False):
        """f on the clean test set, (B, n_test); with ``attention``, (f, softmax over tokens
        (B, n_test, T))."""
        c = self.c
        Gc = self._G(c)
        att = torch.softmax(self.test_scores(c, self._h(Gc)), dim=-1)
        f = (att * self.r_test.view(self.B, self.n_test, self.T)).sum(-1)
        return (f, att) if attention else f

    def test_scores(self, c: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """The test tokens' logits (B, n_test, T) of the query q = W0 W0^T X^T c + X^T h, that is
        X_test V c + X_test X^T h: the model's own with h = A G c, or any direction over the keys
        (benign.synthetic.max_margin_alignment reads the attention-SVM's)."""
        Mc_c = torch.einsum("bnk,bn->bk", self.Mc, c)  # (B, 2)
        Mc_h = torch.einsum("bnk,bn->bk", self.Mc, h)
        shared = (self.EtVE @ c.T + self.EtE @ h.T).T  # (B, Nt)
        low = (Mc_c @ self.EtQ.T) + (Mc_h @ self.Et2.T)  # (B, Nt)
        coef = c @ self.VE2.T + Mc_c @ self.Q2.T + h @ self.E2 + Mc_h  # (B, 2)
        s = shared + low + torch.einsum("btk,bk->bt", self.Mt, coef)
        return s.view(self.B, self.n_test, self.T)

    def head_values(self, split: str) -> torch.Tensor:
        """v_t = <x_t, nu> of every token, (B, m, T) on the ``"train"`` or ``"test"`` set: f is
        their attention-weighted sum (benign.synthetic.selection.reference_losses reads them)."""
        m = {"train": self.n, "test": self.n_test}[split]
        return (self.r if split == "train" else self.r_test).view(self.B, m, self.T)

    def step(self, dt: float = 1.0, keep: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        """One gradient-descent step at lr x ``dt`` (``dt`` other than 1: a step of the gradient
        flow, benign.synthetic.flow); returns the outputs before the update. With ``keep``, the
        state before it is kept for :meth:`undo`: A's update is written to a second buffer
        (the same traffic as in place) and c is replaced, so nothing is copied."""
        f, att = self._train_forward()
        dLdf = -self.y * torch.sigmoid(-self.y * f) / self.n  # (B, n)
        g = (dLdf.unsqueeze(-1) * att * (self.r.view(self.B, self.n, self.T) - f.unsqueeze(-1))).reshape(self.B, -1)
        lr = self.lr[:, None] if dt == 1.0 else self.lr[:, None] * dt
        if self.train_W:
            grad_c = g + self._A_mvT(self._S(g))
            step_g, c_row = (lr * g).unsqueeze(-1).to(self.a_dtype), self.c.unsqueeze(1).to(self.a_dtype)
            if keep:  # A - lr g c^T into the spare buffer (elementwise: one read of A, one write), then swapped
                if self._spare is None:
                    self._spare = torch.empty_like(self.A)
                torch.addcmul(self.A, step_g, c_row, value=-1.0, out=self._spare)
                self.A, self._spare = self._spare, self.A
            else:
                self.A.baddbmm_(step_g, c_row, alpha=-1.0)  # A -= lr g c^T, one pass
        else:
            grad_c = g
        self._kept = self.c if keep else None  # c is replaced, never changed in place
        self.c = self.c - lr * grad_c
        return f, att

    def undo(self) -> None:
        """Take back the last step, taken with ``keep``: exactly the state before it."""
        if self._kept is None:
            raise RuntimeError("undo(): the last step was not taken with keep=True")
        if self.train_W:
            self.A, self._spare = self._spare, self.A
        self.c, self._kept = self._kept, None

    def state(self) -> dict[str, torch.Tensor]:
        return {"c": self.c.clone(), "A": self.A.clone()}

    def load_state(self, state: dict[str, torch.Tensor]) -> None:
        self.c, self.A = state["c"].to(self.c), state["A"].to(self.A)
        self._logits_of = None

    # -- what the attention-SVM check reads (benign.synthetic.max_margin_alignment) ------------------------
    def scores(self) -> torch.Tensor:
        """s = X W p of every training token, (B, n, T): the logits the softmax selects by."""
        return self._logits().view(self.B, self.n, self.T)

    def key_gram(self, keys: str) -> torch.Tensor:
        """(B, N, N) Gram matrices of the training tokens' keys: ``"init"``, k = W0^T x (G = X W0
        W0^T X^T, p's keys with W fixed) or ``"raw"``, k = x (S = X X^T, the keys of the query W p)."""
        Mc = self.Mc
        if keys == "init":
            return self.EVE + self.EQ @ Mc.mT + Mc @ self.VE2 + Mc @ self.Q2 @ Mc.mT
        if keys == "raw":
            return self.EE + self.E2 @ Mc.mT + Mc @ self.E2.T + Mc @ Mc.mT
        raise ValueError(f"keys must be 'init' or 'raw', got {keys!r}")

    def query_norm(self) -> torch.Tensor:
        """||W p|| of every run, (B,). With q = W p = Z^T c + X^T h (Z = X W0 W0^T, h = A G c):
        ||q||^2 = c^T Z Z^T c + 2 c^T G h + h^T S h; Z Z^T is formed once per batch."""
        if not hasattr(self, "_ZZ"):
            Z = torch.stack([(self.YE + self.Mc[b] @ self.W0top) @ self.W0.T for b in range(self.B)])  # X W0 W0^T
            self._ZZ = Z @ Z.mT
        c = self.c
        Gc = self._G(c)
        h = self._h(Gc)
        sq = (c * _mv(self._ZZ, c)).sum(-1) + 2 * (h * Gc).sum(-1) + (h * self._S(h)).sum(-1)
        return sq.clamp_min(0).sqrt()

    # -- explicit parameters (for checks against a dense implementation) -------------------
    def parameters(self, b: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Materialise (W, p) of run ``b``: p = Y c, W = W0 + X^T A Y^T with Y = W0^T X^T."""
        X = self.E.clone()
        X[:, :2] += self.Mc[b]
        Y = (self.YE + self.Mc[b] @ self.W0top).T  # (d, N) = W0^T X^T
        p = Y @ self.c[b]
        W = self.W0 + X.T @ self.A[b].to(self.dtype) @ Y.T
        return W, p
