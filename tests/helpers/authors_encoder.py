"""The authors' one-layer encoder (keitaroskmt/benign-attention, ``main_one_layer.py``), written
out here as their modules are: ``SingleHeadAttention``, ``FeedForward`` and ``OneLayerEncoder``
with the skip connections on, as nn.Modules over the full sequence, with autograd and SGD.

Only the [CLS] broadcast differs in spelling (their ``einops.repeat`` is an ``expand`` here).
Their parameters start from PyTorch's own initialisation; :func:`load` copies ours into them, so
the two trainings can be compared step by step.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


class SingleHeadAttention(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.scale = dim ** (-0.5)
        self.norm = nn.LayerNorm(dim)
        self.attend = nn.Softmax(dim=-1)
        self.to_qkv = nn.Linear(dim, dim * 3, bias=False)

    def forward_with_scores(self, x: Tensor) -> tuple[Tensor, Tensor]:
        x = self.norm(x)
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        attn = self.attend(torch.matmul(q, k.transpose(-1, -2)) * self.scale)
        return torch.matmul(attn, v), attn


class FeedForward(nn.Module):
    def __init__(self, dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.LayerNorm(dim), nn.Linear(dim, hidden_dim), nn.GELU(), nn.Dropout(0.0),
            nn.Linear(hidden_dim, dim), nn.Dropout(0.0),
        )  # fmt: skip

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)


class OneLayerEncoder(nn.Module):
    def __init__(self, dim: int, mlp_dim: int) -> None:
        super().__init__()
        self.attn = SingleHeadAttention(dim)
        self.ff = FeedForward(dim=dim, hidden_dim=mlp_dim)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, 1)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim))  # "Corresponds to p"

    def forward_with_scores(self, x: Tensor) -> tuple[Tensor, Tensor]:
        cls_tokens = self.cls_token.expand(x.shape[0], 1, x.shape[2])
        x = torch.cat((cls_tokens, x), dim=1)
        out, attention_scores = self.attn.forward_with_scores(x)
        attention_scores = attention_scores[:, 0, 1:]  # the [CLS] row over the input tokens
        x = out + x
        x = self.ff(x) + x
        x = self.norm(x)
        return self.head(x[:, 0]).squeeze(1), attention_scores


def load(model: OneLayerEncoder, P: dict[str, Tensor]) -> None:
    """Copy one run's parameters of benign.synthetic.models.encoder (matrices acting as x @ M) into ``model``."""
    with torch.no_grad():
        model.cls_token.copy_(P["cls"].view(1, 1, -1))
        model.attn.norm.weight.copy_(P["ln1_w"])
        model.attn.norm.bias.copy_(P["ln1_b"])
        model.attn.to_qkv.weight.copy_(torch.cat([P["Wq"].T, P["Wk"].T, P["Wv"].T]))
        ln2, lin1, _, _, lin2, _ = model.ff.net
        ln2.weight.copy_(P["ln2_w"])
        ln2.bias.copy_(P["ln2_b"])
        lin1.weight.copy_(P["W1"].T)
        lin1.bias.copy_(P["b1"])
        lin2.weight.copy_(P["W2"].T)
        lin2.bias.copy_(P["b2"])
        model.norm.weight.copy_(P["lnf_w"])
        model.norm.bias.copy_(P["lnf_b"])
        model.head.weight.copy_(P["head_w"].view(1, -1))
        model.head.bias.copy_(P["head_b"].view(1))
