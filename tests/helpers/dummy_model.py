"""A model that is not in the registry, for the test that adding one is a module, a registry
line and a config block (tests/synthetic/test_registry.py): f(X) = sum_t softmax(X p)_t <x_t, w>, with the
query p and the head w both trained by autograd, in float64. Dense and slow: a test model."""

from __future__ import annotations

import torch

CPU_DTYPE = torch.float64


def cost(B: int, run: dict, device: str) -> tuple[float, float]:
    """(bytes, seconds) of a batch: its tokens and parameters, a second per million token-steps."""
    tokens = (run["n"] + run["n_test"]) * run["T"] * run["d"]
    return 8.0 * (B + 1) * tokens, 1e-6 * B * run["steps"] * tokens


class Batch:
    def __init__(self, data, *, lrs, device, dtype, seed, scale: float = 1.0):
        g = torch.Generator().manual_seed(seed)
        B, d = data.B, data.noise.shape[-1]
        self.X = data.tokens().to(device, dtype)  # (B, n, T, d)
        self.X_test = torch.stack([data.noise_test + 0 for _ in range(B)]).to(device, dtype)
        self.X_test[..., :2] += data.coef_test.to(device, dtype)
        self.y = data.y.to(device, dtype)
        self.y_test = data.y_test.to(device, dtype)
        self.noisy = data.noisy
        self.lrs = torch.tensor(lrs, dtype=dtype, device=device)
        self.p = (scale * torch.randn(B, d, generator=g, dtype=torch.float64) / d**0.5).to(device, dtype)
        self.w = (torch.randn(B, d, generator=g, dtype=torch.float64) / d**0.5).to(device, dtype)

    def _forward(self, X, p, w):
        att = torch.softmax(torch.einsum("bntd,bd->bnt", X, p), dim=-1)
        return torch.einsum("bnt,bntd,bd->bn", att, X, w), att

    def step(self):
        p, w = self.p.clone().requires_grad_(), self.w.clone().requires_grad_()
        f, att = self._forward(self.X, p, w)
        loss = torch.nn.functional.softplus(-self.y * f).mean(-1).sum()
        gp, gw = torch.autograd.grad(loss, (p, w))
        self.p = self.p - self.lrs[:, None] * gp
        self.w = self.w - self.lrs[:, None] * gw
        return f.detach(), att.detach()

    def outputs_train(self):
        return self._forward(self.X, self.p, self.w)

    def outputs_test(self, attention: bool = False):
        f, att = self._forward(self.X_test, self.p, self.w)
        return (f, att) if attention else f

    def state(self):
        return {"p": self.p, "w": self.w}

    def load_state(self, state):
        self.p, self.w = state["p"], state["w"]
