"""Plain reference implementations for the benchmarks: the training scripts a first-time
implementer would write, one run at a time.

- a ``torch.utils.data.Dataset`` and ``DataLoader`` (full batch) for the training and test sets;
- an ``nn.Module`` with dense parameters (the d x d W, the full-sequence encoder);
- ``torch.optim.SGD``, autograd, float32 by default;
- evaluation of train and test loss/accuracy through the DataLoaders at every logging step
  (the authors' token-selection script evaluates after every step).

They take the same inputs as the library (the data of ``benign.synthetic.data_model.generate`` and the
initialisation of ``benign.synthetic.models.token_selection.init_W`` / ``benign.synthetic.models.encoder.init_params``) so that
the benchmarks can check the two agree, and they report where their time went (setup,
training steps, evaluation) so that other logging schedules can be priced from one run.
"""

from __future__ import annotations

import math
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

from benign.synthetic import data_model as synthetic
from benign.synthetic.models.encoder import init_params
from benign.synthetic.models.token_selection import init_W


class TokenDataset(Dataset):
    def __init__(self, X: torch.Tensor, y: torch.Tensor) -> None:
        self.X, self.y = X, y

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i: int):
        return self.X[i], self.y[i]


def logistic_loss(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.log(1.0 + torch.exp(-y * out))


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@torch.no_grad()
def evaluate(model: nn.Module, loader: DataLoader, device: torch.device) -> tuple[float, float]:
    """(mean logistic loss, accuracy) over a loader, the way a training script logs them."""
    model.eval()
    loss_sum, correct, total = 0.0, 0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        out = model(x)[0]
        loss_sum += logistic_loss(out, y).sum().item()
        correct += (out * y > 0).sum().item()
        total += len(y)
    model.train()
    return loss_sum / total, correct / total


# -- token-selection model ---------------------------------------------------------------
class TokenSelection(nn.Module):
    """f(X) = sum_t softmax(X W p)_t <x_t, nu>, dense W (d x d), p (d), nu fixed.

    ``order="wp"`` computes X (W p) (a matrix-vector product first); ``order="xw"`` computes
    (X W) p left to right, as ``x @ self.W @ self.p`` does (the authors' code)."""

    def __init__(self, W0: torch.Tensor, nu: torch.Tensor, order: str = "wp") -> None:
        super().__init__()
        self.W = nn.Parameter(W0.clone())
        self.p = nn.Parameter(torch.zeros(W0.shape[0], dtype=W0.dtype))
        self.register_buffer("nu", nu.clone())
        self.order = order

    def forward(self, x: torch.Tensor):
        logits = x @ (self.W @ self.p) if self.order == "wp" else x @ self.W @ self.p
        att = torch.softmax(logits, dim=-1)
        return (att * (x @ self.nu)).sum(-1), att


def _log_due(step: int, steps: int, log_every: int) -> bool:
    return step in (0, steps) or (log_every > 0 and step % log_every == 0)


def _fit(model, data, cfg, lr, steps, log_every, dtype, stop_after, device, t0, step_losses: bool):
    """The plain training script shared by both models: full-batch DataLoaders, SGD, and
    train/test evaluation through the loaders at every logging step. Returns (curves, the
    training loss of every step if asked, time split)."""
    train_loader = DataLoader(TokenDataset(data.X_train.to(dtype), data.y_train.to(dtype)), batch_size=cfg.n)
    test_loader = DataLoader(TokenDataset(data.X_test.to(dtype), data.y_test.to(dtype)), batch_size=cfg.n_test)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    _sync(device)
    timing = {"setup_s": time.perf_counter() - t0, "train_s": 0.0, "eval_s": 0.0, "steps": 0, "evals": 0}
    curves, losses = [], []

    def log(step: int) -> None:
        t = time.perf_counter()
        train_loss, train_acc = evaluate(model, train_loader, device)
        test_loss, test_acc = evaluate(model, test_loader, device)
        curves.append((step, train_loss, test_loss, train_acc, test_acc))
        timing["eval_s"] += time.perf_counter() - t
        timing["evals"] += 1

    last = steps if stop_after is None else min(steps, stop_after)
    log(0)
    for step in range(1, last + 1):
        t = time.perf_counter()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            out, _ = model(x)
            loss = logistic_loss(out, y).mean()
            loss.backward()
            optimizer.step()
            if step_losses:
                losses.append(loss.item())
        _sync(device)
        timing["train_s"] += time.perf_counter() - t
        timing["steps"] += 1
        if _log_due(step, steps, log_every):
            log(step)
    timing["total_s"] = time.perf_counter() - t0
    return curves, losses, timing


def train_token(
    cfg: synthetic.DataSpec,
    lr: float = 5e-3,
    steps: int = 1000,
    log_every: int = 1,
    dtype: torch.dtype = torch.float32,
    order: str = "wp",
    stop_after: int | None = None,
    device: torch.device | str = "cpu",
) -> dict:
    """One run of the token-selection model. Logs (train loss, test loss, train acc, test acc)
    at step 0, every ``log_every`` steps and at the end; ``stop_after`` ends after that many
    steps (a timed prefix). Returns curves, final (W, p) and the time split."""
    t0 = time.perf_counter()
    data = synthetic.generate(cfg)
    W0 = init_W(cfg.d, cfg.seed)
    device = torch.device(device)
    model = TokenSelection(W0.to(dtype), data.nu.to(dtype), order).to(device)
    curves, _, timing = _fit(model, data, cfg, lr, steps, log_every, dtype, stop_after, device, t0, step_losses=False)
    return {"curves": curves, "W": model.W.detach(), "p": model.p.detach(), "timing": timing}


# -- one-layer encoder ---------------------------------------------------------------------
class Encoder(nn.Module):
    """The textbook one-layer pre-LayerNorm encoder over all T+1 positions (docs/model.md#one-layer-encoder)."""

    def __init__(self, d: int, mlp_dim: int) -> None:
        super().__init__()
        self.d = d
        self.cls = nn.Parameter(torch.zeros(d))
        self.norm1 = nn.LayerNorm(d)
        self.to_qkv = nn.Linear(d, 3 * d, bias=False)
        self.mlp = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, mlp_dim), nn.GELU(), nn.Linear(mlp_dim, d))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, 1)

    @torch.no_grad()
    def load_library_params(self, P: dict[str, torch.Tensor]) -> Encoder:
        """Copy one run's ``benign.synthetic.models.encoder.init_params`` (which act as x @ W) into the Linears."""
        self.cls.copy_(P["cls"])
        self.norm1.weight.copy_(P["ln1_w"])
        self.norm1.bias.copy_(P["ln1_b"])
        self.to_qkv.weight.copy_(torch.cat([P["Wq"].T, P["Wk"].T, P["Wv"].T]))
        ln2, fc1, _, fc2 = self.mlp
        ln2.weight.copy_(P["ln2_w"])
        ln2.bias.copy_(P["ln2_b"])
        fc1.weight.copy_(P["W1"].T)
        fc1.bias.copy_(P["b1"])
        fc2.weight.copy_(P["W2"].T)
        fc2.bias.copy_(P["b2"])
        self.norm.weight.copy_(P["lnf_w"])
        self.norm.bias.copy_(P["lnf_b"])
        self.head.weight.copy_(P["head_w"][None])
        self.head.bias.copy_(P["head_b"].reshape(1))
        return self

    def forward(self, x: torch.Tensor):
        h = torch.cat([self.cls.expand(x.shape[0], 1, self.d), x], dim=1)
        q, k, v = self.to_qkv(self.norm1(h)).chunk(3, dim=-1)
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.d), dim=-1)
        h = h + att @ v
        h = h + self.mlp(h)
        out = self.norm(h)
        return self.head(out[:, 0]).squeeze(-1), att[:, 0]


def train_encoder(
    cfg: synthetic.DataSpec,
    mlp_dim: int = 2000,
    lr: float = 5e-3,
    steps: int = 1000,
    log_every: int = 50,
    dtype: torch.dtype = torch.float32,
    stop_after: int | None = None,
    device: torch.device | str = "cpu",
) -> dict:
    """One encoder run, same structure as :func:`train_token`; also returns the training loss
    of every step (before its update), for the agreement check."""
    t0 = time.perf_counter()
    data = synthetic.generate(cfg)
    device = torch.device(device)
    model = Encoder(cfg.d, mlp_dim).to(dtype).load_library_params(init_params(cfg.d, mlp_dim, cfg.seed)).to(device)
    curves, step_losses, timing = _fit(
        model, data, cfg, lr, steps, log_every, dtype, stop_after, device, t0, step_losses=True
    )
    return {"curves": curves, "step_losses": step_losses, "model": model, "timing": timing}
