"""The cost of re-initialising query and key (benign/real/reinit_cost.py), against the full model:
uniform attention is what the backbone computes with a zero query and key, and the attention
branch is what its attention module adds to position 0."""

import pytest
import torch
from torch import nn

from benign.real.backbones import find_query_key, last_encoder_layer
from benign.real.final_layer import FinalBlock, backbone_pooler, full_forward, make_head
from benign.real.reinit_cost import attention_share, uniform_accuracy
from tests.helpers.real_data import tiny_inputs, tiny_model
from tests.real.test_final_layer import layer_input

FAMILIES = ["vit", "bert", "dinov2"]


def setting(kind: str):
    model = tiny_model(kind).double()
    inputs = tiny_inputs(kind, torch.float64)
    hidden = layer_input(model, inputs)
    mask = inputs["attention_mask"].bool() if "attention_mask" in inputs else None
    head = make_head(32, 3, backbone_pooler(model), 0.5, torch.Generator().manual_seed(5)).double()
    return model, inputs, hidden, mask, head


@pytest.mark.parametrize("kind", FAMILIES)
def test_uniform_attention_equals_the_backbone_with_a_zero_query_and_key(kind):
    """All scores equal: the backbone's own softmax is uniform over the real tokens (padding masked)."""
    model, inputs, hidden, mask, head = setting(kind)
    block = FinalBlock.from_backbone(model)  # its own query/key: uniform() must ignore them
    with torch.no_grad():
        for linear in find_query_key(model):
            nn.init.zeros_(linear.weight)
            nn.init.zeros_(linear.bias)
        logits_full, attention_full = full_forward(model, head, inputs)
        real = mask.sum(1, keepdim=True) if mask is not None else hidden.shape[1]
        expected = (
            mask.double() if mask is not None else torch.ones(attention_full.shape[::2], dtype=torch.float64)
        ) / real
        torch.testing.assert_close(attention_full, expected[:, None].expand_as(attention_full))
        logits = head(block.uniform(hidden, mask))
    torch.testing.assert_close(logits, logits_full, rtol=1e-6, atol=1e-8)  # as the cached path vs the full model
    labels = torch.tensor([0, 1, 2])
    direct = (logits_full.argmax(-1) == labels).double().mean().item()
    chunks = [(hidden[:2], mask[:2] if mask is not None else None, labels[:2]),
              (hidden[2:], mask[2:] if mask is not None else None, labels[2:])]  # fmt: skip
    assert uniform_accuracy(block, head, chunks, batch_size=1) == direct
    assert len({tuple(row) for row in logits.tolist()}) == 3  # the samples differ: not a constant


@pytest.mark.parametrize("kind", FAMILIES)
def test_attention_share_is_the_attention_modules_share_of_position_0(kind):
    """Pre-norm layers (ViT, DINOv2) add the attention module's output (times layer scale) to the
    residual stream; BERT adds its attention output's dense projection, then normalises the sum."""
    model, inputs, hidden, mask, _ = setting(kind)
    layer = last_encoder_layer(model)
    seen = {}
    module = layer.attention.output.dense if kind == "bert" else layer.attention
    hook = module.register_forward_hook(lambda module, args, out: seen.update(out=out[0] if kind != "bert" else out))
    with torch.no_grad():
        model(**inputs)
    hook.remove()
    branch = seen["out"][:, 0]
    if kind == "dinov2":
        branch = layer.layer_scale1(branch)
    x0 = hidden[:, 0]
    expected = (branch.norm(dim=-1) / (branch.norm(dim=-1) + x0.norm(dim=-1))).mean().item()
    block = FinalBlock.from_backbone(model)
    assert attention_share(block, [(hidden, mask, torch.zeros(3))]) == pytest.approx(expected, rel=1e-6)
    assert 0 < expected < 1
