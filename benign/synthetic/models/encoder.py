"""The one-layer transformer encoder (docs/model.md#one-layer-encoder), many runs at once,
computing only what reaches the head.

A learnable [CLS] vector is prepended to the T tokens; pre-LayerNorm single-head attention
(qkv without bias, scale d^{-1/2}, no output projection), residual, pre-LayerNorm MLP
(d -> mlp_dim -> d, GELU), residual, final LayerNorm, linear head on [CLS]. All parameters
are trained by full-batch gradient descent.

Only the [CLS] position reaches the head, so only its attention row, its value mix and its
MLP are computed: exact, and T+1 times less work than the full layer. The [CLS] input is the
same vector for every sample, so its query q0 (and W_k q0, which scores every key as
a_j . W_k q0) is computed once per run rather than once per sample. The value mix is done
before the projection: sum_j att_j (a_j W_v) = (sum_j att_j a_j) W_v. The tokens' LayerNorm
statistics are fixed data, computed once. The gradients are derived by hand
(:func:`cls_backward`; no autograd graph). Read top to bottom: the parameters, the forward
pass, the backward pass, then :class:`Batch`, which trains them. Its speed machinery (deferred
updates, CUDA graphs) lives in :mod:`benign.synthetic.speed`, its settings in :mod:`benign.synthetic.speed.settings`.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from benign.synthetic import data_model as synthetic
from benign.synthetic.models.batch_data import BatchData
from benign.synthetic.speed import settings
from benign.synthetic.speed.cuda_graphs import GraphedStep
from benign.synthetic.speed.deferred import Deferred

CPU_DTYPE = torch.float32

PARAM_NAMES = (
    "cls", "ln1_w", "ln1_b", "Wq", "Wk", "Wv", "ln2_w", "ln2_b",
    "W1", "b1", "W2", "b2", "lnf_w", "lnf_b", "head_w", "head_b",
)  # fmt: skip


def init_params(d: int, mlp_dim: int, seed: int) -> dict[str, torch.Tensor]:
    """One run's parameters (float64, CPU), as the authors' ``OneLayerEncoder`` starts them:
    PyTorch defaults (Linear U(-1/sqrt(fan_in), ..), LayerNorm weight 1 and bias 0) and the
    [CLS] vector N(0, I_d) (their ``torch.randn(1, 1, dim)``, "corresponds to p"). A zero [CLS]
    would be a fixed point of the attention's start: LayerNorm of zero is zero, so its query is
    zero and the attention stays uniform. Drawn last, so the other entries do not depend on it."""
    g = synthetic.generator(seed, "init")

    def uniform(fan_in: int, *shape: int) -> torch.Tensor:
        bound = 1.0 / math.sqrt(fan_in)
        return (torch.rand(*shape, generator=g, dtype=torch.float64) * 2 - 1) * bound

    ones, zeros = torch.ones(d, dtype=torch.float64), torch.zeros(d, dtype=torch.float64)
    params = {
        "ln1_w": ones.clone(),
        "ln1_b": zeros.clone(),
        "Wq": uniform(d, d, d),
        "Wk": uniform(d, d, d),
        "Wv": uniform(d, d, d),
        "ln2_w": ones.clone(),
        "ln2_b": zeros.clone(),
        "W1": uniform(d, d, mlp_dim),
        "b1": uniform(d, mlp_dim),
        "W2": uniform(mlp_dim, mlp_dim, d),
        "b2": uniform(mlp_dim, d),
        "lnf_w": ones.clone(),
        "lnf_b": zeros.clone(),
        "head_w": uniform(d, d),
        "head_b": uniform(d, 1)[0],
    }
    return {"cls": torch.randn(d, generator=g, dtype=torch.float64), **params}


# The d x d (and d x mlp_dim) matrices, each used as x M (M = W_k^T for W_k). Their gradients
# are outer products x^T dL/d(x M), so training applies them in place (baddbmm_) or keeps them
# as factors (Deferred) instead of materialising a gradient tensor per matrix.
MATRICES = ("Wq", "Wk", "Wv", "W1", "W2")


def layer_normed(X: torch.Tensor) -> torch.Tensor:
    """The tokens' LayerNorm before its affine part (fixed data, so computed once per data set)."""
    return F.layer_norm(X, (X.shape[-1],))


def _matmul(x: torch.Tensor, M: torch.Tensor, transposed: bool, low_rank) -> torch.Tensor:
    """x M (x M^T if ``transposed``), batched, plus E F where ``low_rank`` = (E, F)."""
    out = torch.bmm(x, M.transpose(1, 2) if transposed else M)
    return out if low_rank is None else out.baddbmm_(*low_rank)


def _product(P: dict, name: str, x: torch.Tensor, deferred: dict | None) -> torch.Tensor:
    """x times the matrix ``name`` as it acts (W_k acts transposed), pending updates included."""
    low = deferred[name].low_rank(x) if deferred and name in deferred else None
    return _matmul(x, P[name], name == "Wk", low)


def _product_t(P: dict, name: str, g: torch.Tensor, deferred: dict | None) -> torch.Tensor:
    """g times the transpose of the matrix ``name`` as it acts: the gradient of :func:`_product`'s input."""
    low = deferred[name].low_rank_t(g) if deferred and name in deferred else None
    return _matmul(g, P[name], name != "Wk", low)


LN_EPS = 1e-5  # torch's LayerNorm default


def _normalize(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """LayerNorm without its affine part over the last dimension: (x_hat, mean, 1/std)."""
    return torch.native_layer_norm(x, (x.shape[-1],), None, None, LN_EPS)


def _normalize_backward(g: torch.Tensor, x: torch.Tensor, mean: torch.Tensor, rstd: torch.Tensor) -> torch.Tensor:
    """Gradient in x of :func:`_normalize` given the gradient g of x_hat."""
    return torch.ops.aten.native_layer_norm_backward(
        g, x, (x.shape[-1],), mean, rstd, None, None, [True, False, False]
    )[0]


def cls_forward(
    P: dict[str, torch.Tensor], Xn: torch.Tensor, tape: dict | None = None, deferred: dict | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Batched [CLS]-only forward. P: tensors with a leading run dimension B; Xn: the tokens
    after LayerNorm's normalisation, before its affine part (:func:`layer_normed`), (B, n, T, d).

    Returns (f (B, n), [CLS] attention over [CLS] and the T tokens (B, n, T+1)). With ``tape``,
    the intermediate values :func:`cls_backward` needs are stored in it; with ``deferred``,
    pending updates of the matrices are included (:class:`Deferred`).

    The tokens' LayerNorm output a = Xn w + b is never formed: a score a . k is
    Xn . (w k) + b . k, and an attention mix sum_j att_j a_j is (sum_j att_j Xn_j) w + b sum_j att_j.
    """
    B, n, T, d = Xn.shape
    w, b = P["ln1_w"], P["ln1_b"]
    c_hat, c_mean, c_rstd = _normalize(P["cls"])
    a_cls = c_hat * w + b  # (B, d)
    q0 = _product(P, "Wq", a_cls.unsqueeze(1), deferred)  # (B, 1, d)
    kq = _product(P, "Wk", q0, deferred)  # (W_k q0)^T: scores are a_j . W_k q0
    scale = 1.0 / math.sqrt(d)
    s_cls = (a_cls * kq[:, 0]).sum(-1, keepdim=True) * scale  # (B, 1)
    s_tok = torch.bmm(Xn.reshape(B, n * T, d), (w * kq[:, 0]).unsqueeze(-1)).view(B, n, T)
    s_tok = (s_tok + (b * kq[:, 0]).sum(-1)[:, None, None]) * scale
    att = torch.softmax(torch.cat([s_cls.unsqueeze(1).expand(B, n, 1), s_tok], dim=-1), dim=-1)
    att_tok = att[..., 1:]
    z = torch.bmm(att_tok.reshape(B * n, 1, T), Xn.reshape(B * n, T, d)).view(B, n, d)
    att_sum = att_tok.sum(-1, keepdim=True)
    mix = att[..., :1] * a_cls.unsqueeze(1) + z * w[:, None] + att_sum * b[:, None]
    hv = _product(P, "Wv", mix, deferred)  # (B, n, d)
    h = P["cls"].unsqueeze(1) + hv
    m_hat, m_mean, m_rstd = _normalize(h)
    m = m_hat * P["ln2_w"][:, None] + P["ln2_b"][:, None]
    u = _product(P, "W1", m, deferred) + P["b1"][:, None]
    act = F.gelu(u)
    h2 = h + _product(P, "W2", act, deferred) + P["b2"][:, None]
    o_hat, o_mean, o_rstd = _normalize(h2)
    o = o_hat * P["lnf_w"][:, None] + P["lnf_b"][:, None]
    f = torch.bmm(o, P["head_w"].unsqueeze(-1)).squeeze(-1) + P["head_b"][:, None]
    if tape is not None:
        tape.update(
            c_hat=c_hat, c_mean=c_mean, c_rstd=c_rstd, a_cls=a_cls, q0=q0, kq=kq[:, 0], att=att, z=z,
            att_sum=att_sum, mix=mix, h=h, m_hat=m_hat, m_mean=m_mean, m_rstd=m_rstd, m=m, u=u, act=act,
            h2=h2, o_hat=o_hat, o_mean=o_mean, o_rstd=o_rstd, o=o,
        )  # fmt: skip
    return f, att


def cls_backward(
    P: dict[str, torch.Tensor], Xn: torch.Tensor, tape: dict, g_f: torch.Tensor, deferred: dict | None = None
) -> tuple[dict[str, torch.Tensor], dict[str, tuple[torch.Tensor, torch.Tensor]]]:
    """Gradients of :func:`cls_forward` (taped) given g_f = dL/df (B, n), derived by hand (no
    autograd graph: a fifth of the operations, the same kernels for LayerNorm and GELU).

    Returns (gradients of the vectors and scalars of P, {matrix: (x, dL/d(x M))}), the second
    being the factors of each matrix's gradient x^T dL/d(x M) (see MATRICES)."""
    t = tape
    B, n, T, d = Xn.shape
    w, b = P["ln1_w"], P["ln1_b"]
    grads = {"head_w": torch.bmm(g_f.unsqueeze(1), t["o"]).squeeze(1), "head_b": g_f.sum(1)}
    g_o = g_f.unsqueeze(-1) * P["head_w"][:, None]  # (B, n, d)
    grads["lnf_w"], grads["lnf_b"] = (g_o * t["o_hat"]).sum(1), g_o.sum(1)
    g_h2 = _normalize_backward(g_o * P["lnf_w"][:, None], t["h2"], t["o_mean"], t["o_rstd"])
    grads["b2"] = g_h2.sum(1)
    g_u = torch.ops.aten.gelu_backward(_product_t(P, "W2", g_h2, deferred), t["u"])
    grads["b1"] = g_u.sum(1)
    g_m = _product_t(P, "W1", g_u, deferred)
    grads["ln2_w"], grads["ln2_b"] = (g_m * t["m_hat"]).sum(1), g_m.sum(1)
    g_h = g_h2 + _normalize_backward(g_m * P["ln2_w"][:, None], t["h"], t["m_mean"], t["m_rstd"])
    g_mix = _product_t(P, "Wv", g_h, deferred)
    # mix = att_0 a_cls + z w + att_sum b, z = sum_j att_j Xn_j (j over the tokens)
    att, a_cls = t["att"], t["a_cls"]
    g_a = (g_mix * att[..., :1]).sum(1)
    g_w = (g_mix * t["z"]).sum(1)
    g_b = (g_mix * t["att_sum"]).sum(1)
    g_att_tok = torch.bmm(Xn.reshape(B * n, T, d), (g_mix * w[:, None]).reshape(B * n, d, 1)).view(B, n, T)
    g_att = torch.cat(
        [(g_mix * a_cls[:, None]).sum(-1, keepdim=True), g_att_tok + (g_mix * b[:, None]).sum(-1, keepdim=True)], -1
    )
    g_s = att * (g_att - (g_att * att).sum(-1, keepdim=True))  # softmax
    # s_0 = c a_cls . kq (the same for every sample), s_j = c (Xn_j . (w kq) + b . kq), c = d^-1/2
    scale = 1.0 / math.sqrt(d)
    g_s0 = g_s[..., 0].sum(1, keepdim=True) * scale  # (B, 1)
    g_stok = g_s[..., 1:] * scale
    U = torch.bmm(g_stok.reshape(B, 1, n * T), Xn.reshape(B, n * T, d)).squeeze(1)  # sum_j g_s_j Xn_j
    g_stok_sum = g_stok.sum((1, 2)).unsqueeze(-1)
    kq = t["kq"]
    g_kq = g_s0 * a_cls + U * w + g_stok_sum * b
    g_a = g_a + g_s0 * kq
    g_w = g_w + U * kq
    g_b = g_b + g_stok_sum * kq
    g_q0 = _product_t(P, "Wk", g_kq.unsqueeze(1), deferred)  # (B, 1, d)
    g_a = g_a + _product_t(P, "Wq", g_q0, deferred).squeeze(1)
    grads["ln1_w"], grads["ln1_b"] = g_w + g_a * t["c_hat"], g_b + g_a
    grads["cls"] = g_h.sum(1) + _normalize_backward(g_a * w, P["cls"], t["c_mean"], t["c_rstd"])
    factors = {
        "Wq": (a_cls.unsqueeze(1), g_q0),
        "Wk": (t["q0"], g_kq.unsqueeze(1)),
        "Wv": (t["mix"], g_h),
        "W1": (t["m"], g_u),
        "W2": (t["act"], g_h2),
    }
    return grads, factors


class Batch:
    """B encoder runs on one :class:`BatchData`, all sharing ``mlp_dim`` and the initialisation
    seed. Attention has T+1 entries per sample: index 0 is [CLS] itself, 1..T the input tokens.

    The five matrices' updates are deferred (:class:`benign.synthetic.speed.deferred.Deferred`): on the
    CPU up to ``defer_rows`` rows per matrix (default ``settings.DEFER_ROWS``), on CUDA by
    ``defer_steps`` whole steps with every matrix folding on the same step (default
    ``settings.cuda_defer_steps()``). 0 applies each update in its step.
    """

    def __init__(
        self, data: BatchData, *, lrs, seed: int, mlp_dim: int, device: torch.device | str = "cpu",
        dtype: torch.dtype = CPU_DTYPE, test_chunk: int = 250, defer_rows: int | None = None,
        defer_steps: int | None = None,
    ) -> None:  # fmt: skip
        if defer_rows is not None and defer_steps is not None:
            raise ValueError("give defer_rows or defer_steps, not both")
        self.B, n, T, d = data.B, *data.noise.shape
        self.n, self.T, self.d, self.n_test = n, T, d, data.noise_test.shape[0]
        device = torch.device(device)
        kw = dict(device=device, dtype=dtype)
        self.test_chunk = test_chunk
        self.noisy = data.noisy
        self.y = data.y.to(**kw)
        self.y_test = data.y_test.to(**kw)
        self.X = data.tokens().to(**kw)
        self.Xn = layer_normed(self.X)
        # Test tokens: shared noise, per-run signal in the first two coordinates only.
        self.Et = data.noise_test.to(**kw)
        self.Mt = data.coef_test.to(**kw)
        # The test tokens after LayerNorm's normalisation, kept where they are small enough (one
        # d 2000 run: 64 MB), else formed per evaluation pass from the shared noise.
        self.Xn_test = None
        if self.B * self.n_test * T * d <= settings.TEST_CACHE_FLOATS:
            chunks = range(0, self.n_test, test_chunk)
            self.Xn_test = torch.cat([self._test_tokens(lo, lo + test_chunk) for lo in chunks], 1)
        one = init_params(d, mlp_dim, seed)
        self.P = {k: v.to(**kw).unsqueeze(0).repeat(self.B, *([1] * v.dim())) for k, v in one.items()}
        self.lr = torch.tensor([float(lr) for lr in lrs], **kw)
        cuda = device.type == "cuda"
        if defer_rows is None and defer_steps is None:
            if cuda:
                defer_steps = settings.cuda_defer_steps()
            else:
                defer_rows = settings.DEFER_ROWS
        self.deferred: dict[str, Deferred] = {}
        for name in MATRICES:
            k = 1 if name in ("Wq", "Wk") else n  # rows appended per step
            d_in, d_out = (mlp_dim, d) if name == "W2" else (d, mlp_dim) if name == "W1" else (d, d)
            rows = defer_steps * k if defer_steps is not None else (defer_rows // k) * k
            if rows >= 2 * k:
                self.deferred[name] = Deferred(self.B, d_in, d_out, rows, **kw)
        self._graphed = (
            GraphedStep(self._step, self._pending_state, self._set_pending, device)
            if cuda and settings.cuda_graphs()
            else None
        )

    # -- training --------------------------------------------------------------------------
    def step(self) -> tuple[torch.Tensor, torch.Tensor]:
        """One gradient-descent step on every parameter; returns the outputs before the update
        (on CUDA, buffers that a later step overwrites: copy them to keep them)."""
        return self._step() if self._graphed is None else self._graphed()

    def _step(self) -> tuple[torch.Tensor, torch.Tensor]:
        with torch.no_grad():
            tape: dict[str, torch.Tensor] = {}
            f, att = cls_forward(self.P, self.Xn, tape, self.deferred)
            # loss: sum over runs of mean_i softplus(-y_i f_i), so each run gets its own gradient
            g_f = -self.y * torch.sigmoid(-self.y * f) / self.n
            grads, factors = cls_backward(self.P, self.Xn, tape, g_f, self.deferred)
            for k, g in grads.items():
                self.P[k].sub_(self.lr.view(-1, *([1] * (g.dim() - 1))) * g)
            for name, (x, g_out) in factors.items():
                g_out = g_out * self.lr.view(-1, 1, 1)  # dL/d(x M), scaled by each run's lr
                dm = self.deferred.get(name)
                if dm is not None:
                    dm.append(x, g_out)
                    if not dm.fits(x.shape[1]):
                        self.fold([name])
                else:  # y = x M: grad M = x^T dL/dy (for W_k, M = W_k^T)
                    self._apply(name, x, g_out)
        return f, att

    def _pending_state(self) -> tuple[int, ...]:
        return tuple(dm.r for dm in self.deferred.values())

    def _set_pending(self, state: tuple[int, ...]) -> None:
        for dm, r in zip(self.deferred.values(), state):
            dm.r = r

    def fold(self, names=None) -> None:
        """Apply the pending updates to their matrices (all by default; after that, P holds the
        current parameters)."""
        with torch.no_grad():
            for name, dm in self.deferred.items():
                if dm.r and (names is None or name in names):
                    self._apply(name, *dm.pending())
                    dm.r = 0

    def _apply(self, name: str, X: torch.Tensor, G: torch.Tensor) -> None:
        """M -= X^T G for the matrix ``name`` as it acts (x M)."""
        with torch.no_grad():
            if name == "Wk":  # acts as W_k^T: W_k^T - X^T G is W_k - G^T X
                self.P[name].baddbmm_(G.transpose(1, 2), X, alpha=-1.0)
            else:
                self.P[name].baddbmm_(X.transpose(1, 2), G, alpha=-1.0)

    # -- outputs ---------------------------------------------------------------------------
    def outputs_train(self) -> tuple[torch.Tensor, torch.Tensor]:
        self.fold()
        with torch.no_grad():
            return cls_forward(self.P, self.Xn)

    def _test_tokens(self, lo: int, hi: int) -> torch.Tensor:
        """Test samples lo..hi of every run, after LayerNorm's normalisation, (B, hi - lo, T, d)."""
        X = self.Et[lo:hi].unsqueeze(0).repeat(self.B, 1, 1, 1)
        X[..., :2] += self.Mt[:, lo:hi]
        return layer_normed(X)

    def outputs_test(self, attention: bool = False):
        """f on the clean test set, (B, n_test); with ``attention``, (f, [CLS]'s attention
        (B, n_test, T + 1))."""
        self.fold()
        with torch.no_grad():
            if self.Xn_test is not None:  # kept: one pass (fewer, larger products)
                f, att = cls_forward(self.P, self.Xn_test)
            else:
                chunks = range(0, self.n_test, self.test_chunk)
                parts = [cls_forward(self.P, self._test_tokens(lo, lo + self.test_chunk)) for lo in chunks]
                f, att = torch.cat([p[0] for p in parts], 1), torch.cat([p[1] for p in parts], 1)
        return (f, att) if attention else f

    # -- checkpoints -----------------------------------------------------------------------
    def state(self) -> dict[str, torch.Tensor]:
        """Parameters and pending updates as they are (saving a checkpoint changes nothing, so a
        resumed run continues exactly like an uninterrupted one)."""
        out = {k: v.detach().clone() for k, v in self.P.items()}
        for name, dm in self.deferred.items():
            X, G = dm.pending()
            out[f"pending.{name}.X"], out[f"pending.{name}.G"] = X.clone(), G.clone()
        return out

    def load_state(self, state: dict[str, torch.Tensor]) -> None:
        with torch.no_grad():
            for k, v in self.P.items():
                v.copy_(state[k])
            for dm in self.deferred.values():
                dm.r = 0
            for name in MATRICES:
                X, G = state.get(f"pending.{name}.X"), state.get(f"pending.{name}.G")
                if X is None or not X.shape[1]:
                    continue
                X, G = X.to(self.P[name]), G.to(self.P[name])
                if name in self.deferred and self.deferred[name].fits(X.shape[1]):
                    self.deferred[name].append(X, G)
                else:  # saved where updates were deferred more, or resumed where they are not
                    self._apply(name, X, G)

    def parameters(self, b: int) -> dict[str, torch.Tensor]:
        self.fold()
        return {k: v[b].detach() for k, v in self.P.items()}
