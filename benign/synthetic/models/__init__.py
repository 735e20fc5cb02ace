"""The synthetic models (docs/model.md), one module each, listed in ``benign.synthetic.registry.MODELS``."""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

import torch

from benign.synthetic import registry
from benign.synthetic.models.batch_data import batch_data


def module(name: str) -> ModuleType:
    """The module of the registered model ``name``."""
    return import_module(registry.model(name).module)


def default_dtype(name: str, device: torch.device) -> torch.dtype:
    return module(name).CPU_DTYPE if device.type == "cpu" else torch.float32


def build(
    name: str, *, n: int, T: int, d: int, sigma: float, n_test: int, seed: int, signal_norms, rhos, etas, lrs,
    device: torch.device | str = "cpu", dtype: torch.dtype | None = None, engine: str = "explicit", **keys,
):  # fmt: skip
    """B runs of model ``name`` (a benign.synthetic.models.interface.ModelBatch) on one shared data draw
    of the ``engine`` (benign.synthetic.gram); ``keys``: the model's own run keys (the encoder's
    ``mlp_dim``) and its Batch's options."""
    device = torch.device(device)
    data = batch_data(
        n=n, T=T, d=d, sigma=sigma, n_test=n_test, seed=seed, signal_norms=signal_norms, rhos=rhos, etas=etas,
        engine=engine,
    )  # fmt: skip
    dtype = default_dtype(name, device) if dtype is None else dtype
    entry = registry.model(name)
    return module(name).Batch(data, lrs=lrs, device=device, dtype=dtype, seed=seed, **entry.options, **keys)
