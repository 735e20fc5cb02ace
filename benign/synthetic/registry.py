"""The one list of synthetic models.

The config schema, the job planner, the CLI, the workflow's rules, the figures and the tables
read it. Adding a model is a module implementing
:class:`benign.synthetic.models.interface.ModelBatch` plus one line in ``MODELS`` (with its cost
function). Torch-free: the workflow imports this at parse time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from benign.synthetic.costs import encoder_batch, token_batch


@dataclass(frozen=True)
class Model:
    """A synthetic model: its config block is ``synthetic.<name>``."""

    name: str
    module: str  # defines ``Batch`` (benign.synthetic.models.interface.ModelBatch) and ``CPU_DTYPE``
    label: str  # how figures and tables name it
    artifact_prefix: str  # its figures are <prefix>softmax_dynamics, <prefix>loss_heatmap
    # torch-free: cost(B, run, device) -> (bytes, seconds) of a batch of B runs like ``run`` (a
    # plain dict) on a device kind (benign/synthetic/costs.py); the planner sizes jobs with it
    cost: Callable[[int, dict, str], tuple[float, float]]
    # Run keys of its own, set in its config block: {key: its default and description}, the key's
    # type and bounds being the run spec's (benign.synthetic.spec, a ``model_key`` field); passed
    # to ``Batch``.
    run_keys: dict = field(default_factory=dict)
    # Fixed keyword arguments of ``Batch`` that make this model what it is.
    options: dict = field(default_factory=dict)
    # f = sum_t softmax_t <x_t, nu> with the head nu fixed: the loss has a floor (benign.analysis.metrics)
    fixed_head: bool = False
    # how its data and initialisation can be drawn (benign.synthetic.engines.ENGINES)
    engines: tuple = ("explicit",)
    # how it can be trained (benign.synthetic.flow.INTEGRATORS): gradient descent, or also the
    # adaptive gradient flow (a model with ``step(dt)`` and ``scores()``)
    integrators: tuple = ("gd",)


GRAM = ("explicit", "gram")  # the token model's engines (benign.synthetic.gram)
FLOW = ("gd", "flow")  # the token models' integrators (benign.synthetic.flow)
MODELS = {
    m.name: m
    for m in (
        Model("token", "benign.synthetic.models.token_selection", "token-selection model", "", token_batch,
              options={"W": "trained"}, fixed_head=True, engines=GRAM, integrators=FLOW),
        Model("encoder", "benign.synthetic.models.encoder", "one-layer transformer encoder", "encoder_",
              encoder_batch,
              run_keys={"mlp_dim": {"default": 2000, "description": "encoder MLP width (default: the paper's)"}}),
        Model("token_p_w0", "benign.synthetic.models.token_selection", "token-selection model, p trained, W = W0 fixed",
              "token_p_w0_", token_batch, options={"W": "init"}, fixed_head=True,
              engines=GRAM, integrators=FLOW),
        Model("token_p_identity", "benign.synthetic.models.token_selection", "token-selection model, p trained, W = I fixed",
              "token_p_identity_", token_batch, options={"W": "identity"}, fixed_head=True,
              engines=GRAM, integrators=FLOW),
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
