"""The one-layer transformer encoder (SPEC 4), many runs at once, computing only what reaches the head.

A learnable [CLS] vector is prepended to the T tokens; pre-LayerNorm single-head attention
(qkv without bias, scale d^{-1/2}, no output projection), residual, pre-LayerNorm MLP
(d -> mlp_dim -> d, GELU), residual, final LayerNorm, linear head on [CLS]. All parameters
are trained by full-batch gradient descent.

Only the [CLS] position reaches the head, so only its attention row, its value mix and its
MLP are computed: exact, and T+1 times less work than the full layer. The [CLS] input is the
same vector for every sample, so its query q0 (and W_k q0, which scores every key as
a_j . W_k q0) is computed once per run rather than once per sample. The value mix is done
before the projection: sum_j att_j (a_j W_v) = (sum_j att_j a_j) W_v.
"""

from __future__ import annotations

import logging
import math
import os

import torch
import torch.nn.functional as F

from benign import synthetic

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
MATRICES = {"Wq": ("a_cls1", "q0"), "Wk": ("q0", "kq1"), "Wv": ("mix", "hv"), "W1": ("m", "pre1"), "W2": ("act", "out2")}


def cls_forward(P: dict[str, torch.Tensor], X: torch.Tensor, keep: dict | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Batched [CLS]-only forward. P: tensors with a leading run dimension B; X: (B, n, T, d).

    Returns (f (B, n), [CLS] attention over [CLS] and the T tokens (B, n, T+1)). With
    ``keep``, the inputs and outputs of the matrix products are stored in it (see MATRICES).
    """
    B, n, T, d = X.shape
    ln1 = lambda z: F.layer_norm(z, (d,)) * P["ln1_w"][:, None, None] + P["ln1_b"][:, None, None]  # noqa: E731
    a_cls = F.layer_norm(P["cls"], (d,)) * P["ln1_w"] + P["ln1_b"]  # (B, d)
    a_tok = ln1(X)  # (B, n, T, d)
    q0 = torch.bmm(a_cls.unsqueeze(1), P["Wq"])  # (B, 1, d)
    kq = torch.bmm(q0, P["Wk"].transpose(1, 2))  # (W_k q0)^T: scores are a_j . W_k q0
    if keep is not None:
        keep.update(a_cls1=a_cls.unsqueeze(1), q0=q0, kq1=kq)
    q0, kq = q0.squeeze(1), kq.squeeze(1)
    scale = 1.0 / math.sqrt(d)
    s_cls = (a_cls * kq).sum(-1, keepdim=True) * scale  # (B, 1)
    s_tok = torch.bmm(a_tok.reshape(B, n * T, d), kq.unsqueeze(-1)).view(B, n, T) * scale
    att = torch.softmax(torch.cat([s_cls.unsqueeze(1).expand(B, n, 1), s_tok], dim=-1), dim=-1)
    mix_tok = torch.bmm(att[..., 1:].reshape(B * n, 1, T), a_tok.reshape(B * n, T, d)).view(B, n, d)
    mix = att[..., :1] * a_cls.unsqueeze(1) + mix_tok
    hv = torch.bmm(mix, P["Wv"])  # (B, n, d)
    h = P["cls"].unsqueeze(1) + hv
    m = F.layer_norm(h, (d,)) * P["ln2_w"][:, None] + P["ln2_b"][:, None]
    pre1 = torch.bmm(m, P["W1"])
    act = F.gelu(pre1 + P["b1"][:, None])
    out2 = torch.bmm(act, P["W2"])
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
        # Test tokens: shared noise, per-run signal in the first two coordinates only.
        self.Et = e_test.to(**kw)
        self.Mt = torch.stack([synthetic.signal_coefficients(y_test, T, r, m) for r, m in zip(rhos, signal_norms)]).to(
            **kw
        )
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

    def outputs_train(self) -> tuple[torch.Tensor, torch.Tensor]:
        with torch.no_grad():
            return cls_forward(self.P, self.X)

    def outputs_test(self) -> torch.Tensor:
        out = []
        with torch.no_grad():
            for lo in range(0, self.n_test, self.test_chunk):
                X = self.Et[lo : lo + self.test_chunk].unsqueeze(0).repeat(self.B, 1, 1, 1)
                X[..., :2] += self.Mt[:, lo : lo + self.test_chunk]
                out.append(cls_forward(self.P, X)[0])
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
        f, att = cls_forward(self.P, self.X, keep)
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
                if name == "Wk":  # kq^T = q0 W_k^T: grad W_k = (dL/dkq)^T q0
                    self.P[name].baddbmm_(grad_out.transpose(1, 2), x, alpha=-1.0)
                else:  # y = x W: grad W = x^T dL/dy
                    self.P[name].baddbmm_(x.transpose(1, 2), grad_out, alpha=-1.0)
        return f.detach(), att.detach()

    def state(self) -> dict[str, torch.Tensor]:
        return {k: v.detach().clone() for k, v in self.P.items()}

    def load_state(self, state: dict[str, torch.Tensor]) -> None:
        with torch.no_grad():
            for k, v in self.P.items():
                v.copy_(state[k])

    def parameters(self, b: int) -> dict[str, torch.Tensor]:
        return {k: v[b].detach() for k, v in self.P.items()}
