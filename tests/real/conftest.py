"""Fixtures of the real-data tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from transformers import BertTokenizerFast

from tests.helpers.real_data import FIXTURES, tiny_model


@pytest.fixture(scope="session")
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def tiny_backbones(tmp_path_factory) -> dict[str, dict]:
    """Backbone specs of kind 'local' for a tiny BERT (with a word-piece tokenizer) and a tiny ViT."""
    root = tmp_path_factory.mktemp("backbones")
    text = tiny_model("bert")
    text.save_pretrained(root / "bert")
    BertTokenizerFast(vocab_file=str(FIXTURES / "vocab.txt"), do_lower_case=True).save_pretrained(root / "bert")
    tiny_model("vit").save_pretrained(root / "vit")
    return {
        "text": {"name": "tinybert", "kind": "local", "path": str(root / "bert"), "modality": "text", "max_length": 10},
        "image": {"name": "tinyvit", "kind": "local", "path": str(root / "vit"), "modality": "image", "image_size": 8},
    }
