"""The backbone's final layer, evaluated at position 0 only, from cached inputs.

Everything below the final layer is frozen in both phases (docs/real_protocol.md#phase-2-query-and-key), so the hidden states
entering it are computed once (``features.py``) and training runs only this module. Only
position 0 reaches the classifier, so only its query, its attention row and its MLP are
needed; every position still contributes keys and values. Two exact rewrites make the
trained part of the layer cost O(T d H + d^2) per sample and run instead of O(T d^2), per
head h with query q_h:

- scores: q_h . (W_k,h x_t + b_k,h) = (W_k,h^T q_h) . x_t + q_h . b_k,h. The last term is
  the same for every position t, so the softmax ignores it (and its gradient, the key
  bias's, is exactly zero): it is left out, and no token's key is ever projected.
- values: the value projection is frozen, so every token's value W_v x_t + b_v is computed
  once per sample (``tokens``), whatever the runs, and each run only mixes them:
  sum_t a_{h,t} v_{h,t}, T d per sample where mixing the tokens and then projecting costs
  H T d + d^2.

benchmarks/bench_real_flops.py counts the operations of this form against the plain one.

The layer's parts are found by name in the transformers module, whatever the version
calls them; two layouts exist: pre-norm (ViT, DINOv2 with layer scale) and post-norm (BERT).
The test checks logits and query/key gradients against the full model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from benign.real.backbones import KEY_NAMES, QUERY_NAMES, last_encoder_layer

SUPPORTED = ("vit", "dinov2", "bert")

# Role -> names the module may have in the final layer (relative paths, matched on a
# dotted suffix; an exact match wins). Norm names also tell the layout.
ROLES = {
    "query": QUERY_NAMES,
    "key": KEY_NAMES,
    "value": ("v_proj", "value", "v"),
    "attn_out": ("o_proj", "out_proj", "attention.output.dense"),
    "mlp_in": ("fc1", "intermediate.dense"),
    "mlp_out": ("fc2", "output.dense"),
}
PRE_NORMS = {"norm_attn": ("layernorm_before", "norm1"), "norm_mlp": ("layernorm_after", "norm2")}
POST_NORMS = {"norm_attn": ("attention.output.LayerNorm",), "norm_mlp": ("output.LayerNorm",)}
LAYER_SCALES = ("layer_scale1", "layer_scale2")


@dataclass(frozen=True)
class BlockConfig:
    """What the final layer's shape and layout are; stored in the feature cache as JSON."""

    hidden_size: int
    num_heads: int
    intermediate_size: int
    pre_norm: bool
    layer_scale: bool
    final_norm: bool  # the backbone normalises the last layer's output (ViT, DINOv2)
    eps: float
    final_eps: float
    hidden_act: str
    qkv_bias: bool


def find_module(layer: nn.Module, names: tuple[str, ...]) -> nn.Module | None:
    modules = dict(layer.named_modules())
    for name in names:
        if name in modules:
            return modules[name]
    hits = [m for path, m in modules.items() if any(path.endswith("." + n) for n in names)]
    if len(hits) > 1:
        raise ValueError(f"more than one module in {type(layer).__name__} is named like {names}")
    return hits[0] if hits else None


def require(layer: nn.Module, role: str, names: tuple[str, ...]) -> nn.Module:
    module = find_module(layer, names)
    if module is None:
        raise ValueError(f"no {role} module (named one of {names}) in {type(layer).__name__}")
    return module


# The backbones' MLP activations, as transformers defines them ("gelu" is the exact erf form),
# without importing transformers: a training job then starts without its import time.
ACTIVATIONS = {"gelu": F.gelu, "relu": F.relu}


def activation(name: str):
    """The MLP's activation by its transformers name; names not above come from transformers' own table."""
    if name in ACTIVATIONS:
        return ACTIVATIONS[name]
    from transformers.activations import ACT2FN

    return ACT2FN[name]


class FinalBlock(nn.Module):
    """Position 0 of the final layer (plus the backbone's final norm), from the layer's inputs."""

    def __init__(self, cfg: BlockConfig):
        super().__init__()
        self.cfg = cfg
        d, inner = cfg.hidden_size, cfg.intermediate_size
        self.head_dim = d // cfg.num_heads
        self.query = nn.Linear(d, d, bias=cfg.qkv_bias)
        self.key = nn.Linear(d, d, bias=cfg.qkv_bias)
        self.value = nn.Linear(d, d, bias=cfg.qkv_bias)
        self.attn_out = nn.Linear(d, d)
        self.mlp_in = nn.Linear(d, inner)
        self.mlp_out = nn.Linear(inner, d)
        self.norm_attn = nn.LayerNorm(d, eps=cfg.eps)
        self.norm_mlp = nn.LayerNorm(d, eps=cfg.eps)
        self.scale_attn = nn.Parameter(torch.ones(d)) if cfg.layer_scale else None
        self.scale_mlp = nn.Parameter(torch.ones(d)) if cfg.layer_scale else None
        self.final_norm = nn.LayerNorm(d, eps=cfg.final_eps) if cfg.final_norm else None
        self.act = activation(cfg.hidden_act)

    @classmethod
    def from_backbone(cls, model: nn.Module) -> FinalBlock:
        """Copy the final layer (and final norm) of a transformers base model."""
        config = model.config
        if config.model_type not in SUPPORTED:
            raise ValueError(f"the position-0 final layer is written for {SUPPORTED}, not {config.model_type!r}")
        if getattr(config, "position_embedding_type", "absolute") != "absolute" or getattr(
            config, "use_swiglu_ffn", False
        ):
            raise ValueError("the position-0 final layer needs absolute positions and a plain MLP")
        layer = last_encoder_layer(model)
        pre_norm = find_module(layer, PRE_NORMS["norm_attn"]) is not None
        norms = PRE_NORMS if pre_norm else POST_NORMS
        parts = {role: require(layer, role, names) for role, names in {**ROLES, **norms}.items()}
        scales = [find_module(layer, (name,)) for name in LAYER_SCALES]
        final_norm = getattr(model, "layernorm", None)
        cfg = BlockConfig(
            hidden_size=config.hidden_size,
            num_heads=config.num_attention_heads,
            intermediate_size=parts["mlp_in"].out_features,
            pre_norm=pre_norm,
            layer_scale=scales[0] is not None,
            final_norm=final_norm is not None,
            eps=parts["norm_attn"].eps,
            final_eps=final_norm.eps if final_norm is not None else 0.0,
            hidden_act=config.hidden_act,
            qkv_bias=parts["query"].bias is not None,
        )
        block = cls(cfg).to(parts["query"].weight.dtype)
        with torch.no_grad():
            for role, module in parts.items():
                getattr(block, role).load_state_dict(module.state_dict())
            if cfg.layer_scale:
                block.scale_attn.copy_(scales[0].lambda1)
                block.scale_mlp.copy_(scales[1].lambda1)
            if final_norm is not None:
                block.final_norm.load_state_dict(final_norm.state_dict())
        return block

    def config_dict(self) -> dict:
        return asdict(self.cfg)

    def tokens(self, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """hidden (..., T, d) entering the layer -> (what attention reads: the tokens after the
        pre-norm where the layout has one (..., T, d), the residual stream at position 0 (..., d),
        every token's value per head (..., H, T, d / H), laid out as each head mixes them). The
        layer's inputs and its value projection are frozen, so training computes these once per set."""
        tokens = self.norm_attn(hidden) if self.cfg.pre_norm else hidden
        values = self.value(tokens).unflatten(-1, (self.cfg.num_heads, self.head_dim)).transpose(-3, -2)
        return tokens, hidden[..., 0, :], values.contiguous()

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """hidden (B, T, d) entering the layer, mask (B, T) True for real tokens ->
        (output at position 0 (B, d), attention from position 0 (B, H, T))."""
        bias = self.query.bias[None] if self.query.bias is not None else None
        group = Group(*self.tokens(hidden), mask, self.query.weight[None], bias, self.key.weight[None])
        out, (attn,) = self.forward_groups([group])
        return out[0], attn[0]

    def attend(self, group: Group) -> tuple[torch.Tensor, torch.Tensor]:
        """The attention of position 0 for the E query/key pairs of one group, which all read
        the same B samples -> (values mixed by each head (B, E, d), attention (E, B, H, T)).

        The E pairs are laid side by side as E*H heads, so the products over tokens are one
        batched product of (E*H, d) by (d, T) per sample rather than E products of (H, d); each
        head then mixes its slice of the cached values."""
        tokens, mask = group.tokens, group.mask
        B, T, d = tokens.shape
        E, H, dh = group.key_weight.shape[0], self.cfg.num_heads, self.head_dim
        q = tokens[:, 0] @ group.query_weight.reshape(E * d, d).T  # (B, E*d): every pair's query at once
        if group.query_bias is not None:
            q = q + group.query_bias.reshape(E * d)
        u = torch.bmm(q.view(B, E * H, dh).transpose(0, 1), group.key_weight.view(E * H, dh, d))  # (E*H, B, d)
        scores = torch.bmm(u.transpose(0, 1), tokens.transpose(1, 2)) * dh**-0.5  # (B, E*H, T)
        if mask is not None:
            scores = scores.masked_fill(~mask[:, None, :], torch.finfo(scores.dtype).min)
        attn = scores.softmax(dim=-1)
        per_head = attn.view(B, E, H, T).transpose(1, 2)  # (B, H, E, T)
        context = torch.matmul(per_head, group.values).permute(0, 2, 1, 3).reshape(B, E, d)
        return context, attn.view(B, E, H, T).transpose(0, 1)

    def forward_groups(self, groups: Sequence[Group]) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """R = sum of the groups' E runs, each with its own query and key (the phase-2
        parameters) and the layer's other, frozen parts; every group has the same batch size B
        -> (output at position 0 (R, B, d), per group its attention (E, B, H, T))."""
        attended = [self.attend(g) for g in groups]
        context = torch.cat([c for c, _ in attended], dim=1)  # (B, R, d)
        x0 = torch.cat([g.x0[:, None].expand(-1, g.key_weight.shape[0], -1) for g in groups], dim=1)
        return self.finish(context, x0).transpose(0, 1), [a for _, a in attended]

    def branch(self, context: torch.Tensor) -> torch.Tensor:
        """The attention branch that joins the residual stream at position 0 (after layer scale where there is one)."""
        attended_out = self.attn_out(context)
        return self.scale_attn * attended_out if self.cfg.layer_scale else attended_out

    def finish(self, context: torch.Tensor, x0: torch.Tensor) -> torch.Tensor:
        """The layer after attention at position 0: the mixed values ``context`` (..., d) and the
        residual stream ``x0`` (..., d) -> the output (..., d), through the backbone's final norm."""
        if self.cfg.pre_norm:
            h = x0 + self.branch(context)
            mlp = self.mlp_out(self.act(self.mlp_in(self.norm_mlp(h))))
            out = h + (self.scale_mlp * mlp if self.cfg.layer_scale else mlp)
        else:
            h = self.norm_attn(self.attn_out(context) + x0)
            out = self.norm_mlp(self.mlp_out(self.act(self.mlp_in(h))) + h)
        if self.final_norm is not None:
            out = self.final_norm(out)
        return out

    def uniform(self, hidden: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """The output at position 0 (B, d) with uniform attention over the real tokens, whatever
        the query and key, for hidden (B, T, d) and mask (B, T). Every head then mixes the same
        mean token, so the mixed values are the value projection of that mean."""
        tokens, x0, _ = self.tokens(hidden)
        if mask is None:
            mean = tokens.mean(1)
        else:
            weights = mask.to(tokens.dtype)
            mean = (tokens * weights[..., None]).sum(1) / weights.sum(1, keepdim=True)
        return self.finish(self.value(mean), x0)

    def streams(self, hidden: torch.Tensor, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(attention branch, residual stream) at position 0, each (B, d), with the layer's own
        query and key: the two terms whose sum enters the rest of the layer."""
        bias = self.query.bias[None] if self.query.bias is not None else None
        group = Group(*self.tokens(hidden), mask, self.query.weight[None], bias, self.key.weight[None])
        context, _ = self.attend(group)
        return self.branch(context[:, 0]), group.x0


@dataclass
class Group:
    """Runs that read the same samples: tokens (B, T, d), x0 (B, d) and values (B, H, T, d / H) from
    ``FinalBlock.tokens``, mask (B, T) or None, and the E runs' query weight (E, d, d), query
    bias (E, d) or None and key weight (E, d, d)."""

    tokens: torch.Tensor
    x0: torch.Tensor
    values: torch.Tensor
    mask: torch.Tensor | None
    query_weight: torch.Tensor
    query_bias: torch.Tensor | None
    key_weight: torch.Tensor


class Head(nn.Module):
    """The classifier on position 0: BERT's pooler (dense + tanh) if the backbone has one, then a linear layer."""

    def __init__(self, hidden_size: int, num_classes: int, pooler: bool):
        super().__init__()
        self.pooler = nn.Linear(hidden_size, hidden_size) if pooler else None
        self.classifier = nn.Linear(hidden_size, num_classes)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        if self.pooler is not None:
            features = torch.tanh(self.pooler(features))
        return self.classifier(features)


def drop_padding(hidden: torch.Tensor, mask: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Drop the positions that are padding in every sample. Exact: masked positions get
    attention exactly 0, and only position 0's output is used. Short texts padded to 128
    tokens train several times faster."""
    if mask is None:
        return hidden, mask
    keep = mask.any(dim=0)
    keep[0] = True
    return hidden[:, keep], mask[:, keep]


def full_forward(model: nn.Module, head: Head, inputs: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """The plain path: the whole backbone, then the head on position 0 -> (logits, attention row 0 (B, H, T))."""
    out = model(**inputs, output_attentions=True)
    return head(out.last_hidden_state[:, 0]), out.attentions[-1][:, :, 0, :]


def backbone_pooler(model: nn.Module) -> dict[str, torch.Tensor] | None:
    """BERT's pretrained pooler weights (the head starts from them); None for image backbones,
    whose classifier reads the normalised position-0 output directly (as ViTForImageClassification)."""
    pooler = getattr(model, "pooler", None)
    if model.config.model_type != "bert" or pooler is None:
        return None
    return {k: v.detach().clone() for k, v in pooler.dense.state_dict().items()}


def make_head(
    hidden_size: int,
    num_classes: int,
    pooler: dict[str, torch.Tensor] | None,
    init_std: float,
    generator: torch.Generator,
) -> Head:
    """A head whose pooler (if any) starts from the backbone's, and whose classifier is drawn like
    transformers' classification heads: N(0, init_std^2) weights (init_std = initializer_range), zero bias."""
    head = Head(hidden_size, num_classes, pooler is not None)
    with torch.no_grad():
        if pooler is not None:
            head.pooler.load_state_dict(pooler)
        head.classifier.weight.copy_(torch.randn(head.classifier.weight.shape, generator=generator) * init_std)
        head.classifier.bias.zero_()
    return head
