"""The one-layer transformer encoder (SPEC 4), many runs at once, computing only what reaches the head.

A learnable [CLS] vector is prepended to the T tokens; pre-LayerNorm single-head attention
(qkv without bias, scale d^{-1/2}, no output projection), residual, pre-LayerNorm MLP
(d -> mlp_dim -> d, GELU), residual, final LayerNorm, linear head on [CLS]. All parameters
are trained by full-batch gradient descent.

Only the [CLS] position reaches the head, so only its attention row, its value mix and its
MLP are computed: exact, and T+1 times less work than the full layer. The [CLS] input is the
same vector for every sample, so its query q0 (and W_k q0, which scores every key as
a_j . W_k q0) is computed once per run rather than once per sample. The value mix is done
before the projection: sum_j att_j (a_j W_v) = (sum_j att_j a_j) W_v. The tokens' LayerNorm
statistics are fixed data, computed once. On CPU, the matrices' updates are deferred and
applied a few steps' worth at a time (:class:`Deferred`).
"""

from __future__ import annotations

import logging
import math
import os

import torch
import torch.nn.functional as F

from benign import native, synthetic

log = logging.getLogger("benign.encoder")

PARAM_NAMES = (
    "cls", "ln1_w", "ln1_b", "Wq", "Wk", "Wv", "ln2_w", "ln2_b",
    "W1", "b1", "W2", "b2", "lnf_w", "lnf_b", "head_w", "head_b",
)  # fmt: skip


def init_params(d: int, mlp_dim: int, seed: int) -> dict[str, torch.Tensor]:
    """One run's parameters (float64, CPU), PyTorch defaults: Linear U(-1/sqrt(fan_in), ..),
    LayerNorm weight 1 and bias 0, [CLS] zero (uniform attention at step 0, like p = 0)."""
    g = synthetic.generator(seed, "init")

    def uniform(fan_in: int, *shape: int) -> torch.Tensor:
        bound = 1.0 / math.sqrt(fan_in)
        return (torch.rand(*shape, generator=g, dtype=torch.float64) * 2 - 1) * bound

    ones, zeros = torch.ones(d, dtype=torch.float64), torch.zeros(d, dtype=torch.float64)
    return {
        "cls": zeros.clone(),
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


# The d x d (and d x mlp_dim) matrices. Their gradients are outer products of a matmul's
# input and output gradient, so training applies them in place (baddbmm_) instead of
# materialising a gradient tensor per matrix: half the memory traffic of a plain step.
TEST_CACHE_FLOATS = 1 << 25  # normalised test tokens kept between evaluations up to this size (128 MB)
DEFER_ROWS = 64  # rows of pending updates per matrix before they are folded in (CPU)
MATRICES = {"Wq": ("a_cls1", "q0"), "Wk": ("q0", "kq1"), "Wv": ("mix", "hv"), "W1": ("m", "pre1"), "W2": ("act", "out2")}


def layer_normed(X: torch.Tensor) -> torch.Tensor:
    """The tokens' LayerNorm before its affine part (fixed data, so computed once per data set)."""
    return F.layer_norm(X, (X.shape[-1],))


class Deferred:
    """Gradient-descent updates of one matrix M (used as out = x M), kept as factors and applied
    later in one product: M_now = M - X^T G, where each step appends its input rows x to X and
    its lr-scaled output gradients to G. Folding R rows at once is one well-shaped product
    instead of R/n thin ones, and between folds M is only read."""

    def __init__(self, B: int, d_in: int, d_out: int, rows: int, **kw) -> None:
        self.X = torch.zeros(B, rows, d_in, **kw)
        self.G = torch.zeros(B, rows, d_out, **kw)
        self.r = 0

    def apply(self, x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        """out = x M  ->  x M_now."""
        if self.r == 0:
            return out
        return out - torch.bmm(torch.bmm(x, self.X[:, : self.r].transpose(1, 2)), self.G[:, : self.r])

    def fits(self, k: int) -> bool:
        return self.r + k <= self.X.shape[1]

    def append(self, x: torch.Tensor, g: torch.Tensor) -> None:
        k = x.shape[1]
        self.X[:, self.r : self.r + k] = x
        self.G[:, self.r : self.r + k] = g
        self.r += k

    def pending(self) -> tuple[torch.Tensor, torch.Tensor]:
        return self.X[:, : self.r], self.G[:, : self.r]


def _product(P: dict, name: str, x: torch.Tensor, deferred: dict | None) -> torch.Tensor:
    """x times the matrix ``name`` as it acts (W_k acts transposed), pending updates included."""
    out = native.product(x, P[name], transposed=name == "Wk")
    return deferred[name].apply(x, out) if deferred else out


def cls_forward(
    P: dict[str, torch.Tensor], Xn: torch.Tensor, keep: dict | None = None, deferred: dict | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Batched [CLS]-only forward. P: tensors with a leading run dimension B; Xn: the tokens
    after LayerNorm's normalisation, before its affine part (:func:`layer_normed`), (B, n, T, d).

    Returns (f (B, n), [CLS] attention over [CLS] and the T tokens (B, n, T+1)). With
    ``keep``, the inputs and outputs of the matrix products are stored in it (see MATRICES);
    with ``deferred``, pending updates of the matrices are included (:class:`Deferred`).

    The tokens' LayerNorm output a = Xn w + b is never formed: a score a . k is
    Xn . (w k) + b . k, and an attention mix sum_j att_j a_j is (sum_j att_j Xn_j) w + b sum_j att_j.
    """
    B, n, T, d = Xn.shape
    w, b = P["ln1_w"], P["ln1_b"]
    a_cls = F.layer_norm(P["cls"], (d,)) * w + b  # (B, d)
    q0 = _product(P, "Wq", a_cls.unsqueeze(1), deferred)  # (B, 1, d)
    kq = _product(P, "Wk", q0, deferred)  # (W_k q0)^T: scores are a_j . W_k q0
    if keep is not None:
        keep.update(a_cls1=a_cls.unsqueeze(1), q0=q0, kq1=kq)
    q0, kq = q0.squeeze(1), kq.squeeze(1)
    scale = 1.0 / math.sqrt(d)
    s_cls = (a_cls * kq).sum(-1, keepdim=True) * scale  # (B, 1)
    s_tok = torch.bmm(Xn.reshape(B, n * T, d), (w * kq).unsqueeze(-1)).view(B, n, T)
    s_tok = (s_tok + (b * kq).sum(-1)[:, None, None]) * scale
    att = torch.softmax(torch.cat([s_cls.unsqueeze(1).expand(B, n, 1), s_tok], dim=-1), dim=-1)
    att_tok = att[..., 1:]
    z = torch.bmm(att_tok.reshape(B * n, 1, T), Xn.reshape(B * n, T, d)).view(B, n, d)
    mix = att[..., :1] * a_cls.unsqueeze(1) + z * w[:, None] + att_tok.sum(-1, keepdim=True) * b[:, None]
    hv = _product(P, "Wv", mix, deferred)  # (B, n, d)
    h = P["cls"].unsqueeze(1) + hv
    m = F.layer_norm(h, (d,)) * P["ln2_w"][:, None] + P["ln2_b"][:, None]
    pre1 = _product(P, "W1", m, deferred)
    act = F.gelu(pre1 + P["b1"][:, None])
    out2 = _product(P, "W2", act, deferred)
    if keep is not None:
        keep.update(mix=mix, hv=hv, m=m, pre1=pre1, act=act, out2=out2)
    h = h + out2 + P["b2"][:, None]
    out = F.layer_norm(h, (d,)) * P["lnf_w"][:, None] + P["lnf_b"][:, None]
    f = torch.bmm(out, P["head_w"].unsqueeze(-1)).squeeze(-1) + P["head_b"][:, None]
    return f, att


class EncoderBatch:
    """B encoder runs sharing (n, T, d, sigma, n_test, seed, mlp_dim); same interface as
    :class:`benign.token_selection.TokenSelectionBatch`. Attention has T+1 entries per sample:
    index 0 is [CLS] itself, 1..T the input tokens."""

    def __init__(
        self,
        *,
        n: int,
        T: int,
        d: int,
        sigma: float,
        n_test: int,
        seed: int,
        mlp_dim: int,
        signal_norms,
        rhos,
        etas,
        lrs,
        device: torch.device | str = "cpu",
        dtype: torch.dtype = torch.float32,
        test_chunk: int = 250,
        defer_rows: int | None = None,
    ) -> None:
        self.n, self.T, self.d, self.n_test = n, T, d, n_test
        self.B = len(signal_norms)
        kw = dict(device=torch.device(device), dtype=dtype)
        self.test_chunk = test_chunk
        e_train, e_test = synthetic.noise(n, T, d, sigma, n_test, seed)
        y_true = synthetic.balanced_labels(n)
        y_test = synthetic.balanced_labels(n_test)
        self.noisy = torch.stack([synthetic.flip_mask(n, float(eta), seed) for eta in etas])
        self.y = torch.where(self.noisy, -y_true, y_true).to(**kw)
        self.y_test = y_test.to(**kw)
        self.X = torch.stack(
            [
                synthetic.add_signal(e_train, synthetic.signal_coefficients(y_true, T, r, m))
                for r, m in zip(rhos, signal_norms)
            ]
        ).to(**kw)
        self.Xn = layer_normed(self.X)
        # Test tokens: shared noise, per-run signal in the first two coordinates only.
        self.Et = e_test.to(**kw)
        self.Mt = torch.stack([synthetic.signal_coefficients(y_test, T, r, m) for r, m in zip(rhos, signal_norms)]).to(
            **kw
        )
        # The test tokens after LayerNorm's normalisation, kept where they are small enough (one
        # d 2000 run: 64 MB), else formed per evaluation pass from the shared noise.
        self.Xn_test = None
        if self.B * n_test * T * d <= TEST_CACHE_FLOATS:
            self.Xn_test = torch.cat([self._test_tokens(lo, lo + test_chunk) for lo in range(0, n_test, test_chunk)], 1)
        one = init_params(d, mlp_dim, seed)
        self.P = {k: v.to(**kw).unsqueeze(0).repeat(self.B, *([1] * v.dim())) for k, v in one.items()}
        self.small = [k for k in PARAM_NAMES if k not in MATRICES]
        for k in self.small:
            self.P[k].requires_grad_(True)
        self.lr = torch.tensor([float(lr) for lr in lrs], **kw)
        # On CUDA the step is captured once as a CUDA graph and replayed: the same kernels on
        # the same buffers, without a Python and launch overhead per kernel (which dominates
        # for small d). BENIGN_CUDA_GRAPHS=0 turns this off.
        self.use_graph = kw["device"].type == "cuda" and os.environ.get("BENIGN_CUDA_GRAPHS", "1") != "0"
        self._graph: torch.cuda.CUDAGraph | None = None
        self._graph_out: tuple[torch.Tensor, torch.Tensor] | None = None
        self._eager_steps = 0
        # Deferred updates (see Deferred): up to ``defer_rows`` rows per matrix before a fold.
        # On CPU this made the d 2000 run 13-18% faster; on CUDA the step is a fixed graph, so
        # updates are applied at once there.
        if defer_rows is None:
            defer_rows = 0 if kw["device"].type == "cuda" else DEFER_ROWS
        self.deferred: dict[str, Deferred] = {}
        for name in MATRICES:
            k = 1 if name in ("Wq", "Wk") else n  # rows appended per step
            d_in, d_out = (mlp_dim, d) if name == "W2" else (d, mlp_dim) if name == "W1" else (d, d)
            if defer_rows >= 2 * k:
                self.deferred[name] = Deferred(self.B, d_in, d_out, (defer_rows // k) * k, **kw)

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

    def outputs_train(self) -> tuple[torch.Tensor, torch.Tensor]:
        self.fold()
        with torch.no_grad():
            return cls_forward(self.P, self.Xn)

    def _test_tokens(self, lo: int, hi: int) -> torch.Tensor:
        """Test samples lo..hi of every run, after LayerNorm's normalisation, (B, hi - lo, T, d)."""
        X = self.Et[lo:hi].unsqueeze(0).repeat(self.B, 1, 1, 1)
        X[..., :2] += self.Mt[:, lo:hi]
        return layer_normed(X)

    def outputs_test(self) -> torch.Tensor:
        self.fold()
        out = []
        with torch.no_grad():
            for lo in range(0, self.n_test, self.test_chunk):
                hi = lo + self.test_chunk
                Xn = self._test_tokens(lo, hi) if self.Xn_test is None else self.Xn_test[:, lo:hi]
                out.append(cls_forward(self.P, Xn)[0])
        return torch.cat(out, dim=1)

    def step(self) -> tuple[torch.Tensor, torch.Tensor]:
        """One gradient-descent step on every parameter; returns the outputs before the update
        (on CUDA, buffers that the next step overwrites: copy them to keep them)."""
        if self._graph is not None:
            self._graph.replay()
            return self._graph_out
        if not self.use_graph:
            return self._step()
        if self._eager_steps < 3:  # warm-up steps (real steps) on a side stream, as capture requires
            self._eager_steps += 1
            side = torch.cuda.Stream(self.lr.device)
            side.wait_stream(torch.cuda.current_stream(self.lr.device))
            with torch.cuda.stream(side):
                out = self._step()
            torch.cuda.current_stream(self.lr.device).wait_stream(side)
            return out
        graph = torch.cuda.CUDAGraph()
        try:
            torch.cuda.synchronize(self.lr.device)
            with torch.cuda.graph(graph):  # records the step; nothing runs (and nothing is updated) yet
                out = self._step()
        except RuntimeError as err:  # capture unsupported here: go on eagerly, with the same numbers
            log.warning("CUDA graph capture failed (%s); stepping without it", err)
            self.use_graph = False
            return self._step()
        self._graph, self._graph_out = graph, out
        graph.replay()
        return out

    def _step(self) -> tuple[torch.Tensor, torch.Tensor]:
        keep: dict[str, torch.Tensor] = {}
        f, att = cls_forward(self.P, self.Xn, keep, self.deferred)
        loss = F.softplus(-self.y * f).mean(dim=1).sum()  # runs are independent: sum of their losses
        outputs = [keep[out] for _, out in MATRICES.values()]
        grads = torch.autograd.grad(loss, [self.P[k] for k in self.small] + outputs)
        small, by_output = grads[: len(self.small)], dict(zip([o for _, o in MATRICES.values()], grads[len(self.small) :]))
        with torch.no_grad():
            for k, g in zip(self.small, small):
                self.P[k].sub_(self.lr.view(-1, *([1] * (g.dim() - 1))) * g)
            for name, (inp, out) in MATRICES.items():
                grad_out = by_output[out] * self.lr.view(-1, 1, 1)  # dL/d(x W) scaled by each run's lr
                x = keep[inp].detach()
                dm = self.deferred.get(name)
                if dm is not None:
                    dm.append(x, grad_out)
                    if not dm.fits(x.shape[1]):
                        self.fold([name])
                else:  # y = x M: grad M = x^T dL/dy (for W_k, M = W_k^T)
                    self._apply(name, x, grad_out)
        return f.detach(), att.detach()

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
                if name in self.deferred:
                    self.deferred[name].append(X, G)
                else:  # saved where updates were deferred, resumed where they are not (CUDA)
                    self._apply(name, X, G)

    def parameters(self, b: int) -> dict[str, torch.Tensor]:
        self.fold()
        return {k: v[b].detach() for k, v in self.P.items()}
