"""Helpers of the real-data tests: fixture paths and tiny random transformers of each family."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch
from transformers import BertConfig, BertModel, Dinov2Config, Dinov2Model, ViTConfig, ViTModel

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "real"
WIDTH = dict(
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0,
)


def tiny_model(kind: str) -> torch.nn.Module:
    """A random 2-layer transformer of one family, eager attention, eval mode."""
    torch.manual_seed(0)
    if kind == "bert":
        model = BertModel(BertConfig(vocab_size=40, max_position_embeddings=16, intermediate_size=48, **WIDTH))
    elif kind == "vit":
        model = ViTModel(ViTConfig(image_size=8, patch_size=4, intermediate_size=48, **WIDTH))
    else:
        model = Dinov2Model(Dinov2Config(image_size=8, patch_size=4, mlp_ratio=2, layerscale_value=0.7, **WIDTH))
    model.set_attn_implementation("eager")
    return model.eval()


def tiny_inputs(kind: str, dtype: torch.dtype = torch.float32) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    if kind == "bert":
        mask = torch.tensor([[1] * 9, [1] * 5 + [0] * 4, [1] * 2 + [0] * 7])
        return {"input_ids": torch.randint(0, 40, (3, 9), generator=g), "attention_mask": mask}
    return {"pixel_values": torch.randn(3, 3, 8, 8, generator=g, dtype=dtype)}


def has_package(name: str) -> bool:
    return importlib.util.find_spec(name) is not None
