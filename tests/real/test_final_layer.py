"""The cached position-0 final layer equals the full model: logits, attention and query/key gradients."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from benign.real.backbones import find_query_key, last_encoder_layer, reinit_linear
from benign.real.final_layer import FinalBlock, backbone_pooler, drop_padding, full_forward, make_head
from tests.helpers.real_data import tiny_inputs, tiny_model

FAMILIES = ["vit", "bert", "dinov2"]


def layer_input(model, inputs) -> torch.Tensor:
    """The hidden states entering the final layer, as the feature cache stores them."""
    seen = {}
    hook = last_encoder_layer(model).register_forward_pre_hook(
        lambda module, args, kwargs: seen.update(h=args[0] if args else kwargs["hidden_states"]), with_kwargs=True
    )
    with torch.no_grad():
        model(**inputs)
    hook.remove()
    return seen["h"]


def both_paths(kind: str):
    """(full model, cached block, head, inputs, cached hidden, mask) in float64, query/key re-initialised alike."""
    model = tiny_model(kind).double()
    inputs = tiny_inputs(kind, torch.float64)
    hidden = layer_input(model, inputs)
    block = FinalBlock.from_backbone(model)
    for seed, pair in enumerate(zip(find_query_key(model), (block.query, block.key))):
        for linear in pair:
            reinit_linear(linear, torch.Generator().manual_seed(seed))
    head = make_head(32, 3, backbone_pooler(model), 0.02, torch.Generator().manual_seed(5)).double()
    mask = inputs["attention_mask"].bool() if "attention_mask" in inputs else None
    return model, block, head, inputs, hidden, mask


@pytest.mark.parametrize("kind", FAMILIES)
def test_cached_path_equals_full_model(kind):
    model, block, head, inputs, hidden, mask = both_paths(kind)
    query, key = find_query_key(model)
    assert torch.equal(query.weight, block.query.weight) and torch.equal(key.bias, block.key.bias)
    labels = torch.tensor([0, 1, 2])

    logits_full, attention_full = full_forward(model, head, inputs)
    out, attention = block(hidden, mask)
    logits = head(out)
    torch.testing.assert_close(logits, logits_full, rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(attention, attention_full, rtol=1e-5, atol=1e-7)

    full = torch.autograd.grad(F.cross_entropy(logits_full, labels), [query.weight, query.bias, key.weight, key.bias])
    cached = torch.autograd.grad(
        F.cross_entropy(logits, labels),
        [block.query.weight, block.query.bias, block.key.weight, block.key.bias],
        allow_unused=True,
    )
    scale = max(g.abs().max().item() for g in full)
    assert scale > 0
    for name, g_full, g_cached in zip(["query.weight", "query.bias", "key.weight", "key.bias"], full, cached):
        g_cached = torch.zeros_like(g_full) if g_cached is None else g_cached  # the key bias has no effect
        assert (g_cached - g_full).abs().max().item() <= 1e-5 * scale, name


@pytest.mark.parametrize("kind", FAMILIES)
def test_original_weights_reproduce_the_backbone_output(kind):
    model = tiny_model(kind).double()
    inputs = tiny_inputs(kind, torch.float64)
    mask = inputs["attention_mask"].bool() if "attention_mask" in inputs else None
    out, _ = FinalBlock.from_backbone(model)(layer_input(model, inputs), mask)
    with torch.no_grad():
        expected = model(**inputs).last_hidden_state[:, 0]
    torch.testing.assert_close(out.detach(), expected, rtol=1e-6, atol=1e-7)


def test_layouts_are_detected():
    assert FinalBlock.from_backbone(tiny_model("vit")).cfg.pre_norm
    assert not FinalBlock.from_backbone(tiny_model("bert")).cfg.pre_norm
    dinov2 = FinalBlock.from_backbone(tiny_model("dinov2")).cfg
    assert dinov2.pre_norm and dinov2.layer_scale and dinov2.final_norm


def test_dropping_all_padding_columns_is_exact():
    _, block, _, _, hidden, mask = both_paths("bert")
    hidden, mask = hidden[1:], mask[1:]  # 5 and 2 real tokens of 9
    out, attention = block(hidden, mask)
    short_hidden, short_mask = drop_padding(hidden, mask)
    assert short_hidden.shape[1] == 5
    short_out, short_attention = block(short_hidden, short_mask)
    torch.testing.assert_close(short_out, out, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(short_attention, attention[:, :, :5], rtol=1e-12, atol=1e-12)
    assert (attention[:, :, 5:] == 0).all()


@pytest.mark.parametrize("kind", FAMILIES)
def test_query_key_found_in_the_last_layer(kind):
    model = tiny_model(kind)
    query, key = find_query_key(model)
    last = list(last_encoder_layer(model).modules())
    assert any(m is query for m in last) and any(m is key for m in last) and query is not key


def test_query_key_found_by_generic_names():
    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.k, self.v = nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 4)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.config = type("Config", (), {"num_hidden_layers": 2})()
            self.blocks = nn.ModuleList([nn.Sequential(Attention()) for _ in range(2)])

    model = Model()
    query, key = find_query_key(model)
    assert query is model.blocks[1][0].q and key is model.blocks[1][0].k


def test_unsupported_family_is_refused():
    model = tiny_model("vit")
    model.config.model_type = "swin"
    with pytest.raises(ValueError, match="written for"):
        FinalBlock.from_backbone(model)


def test_the_activation_table_is_transformers_own():
    from transformers.activations import ACT2FN

    from benign.real.final_layer import ACTIVATIONS, activation

    x = torch.randn(1000, dtype=torch.float64) * 3
    for name, fn in ACTIVATIONS.items():
        assert torch.equal(fn(x), ACT2FN[name](x)), name
    assert torch.equal(activation("silu")(x), ACT2FN["silu"](x))  # a name not in the table comes from transformers
