"""What the trainer asks of a synthetic model (benign.synthetic.trainer): the ``ModelBatch`` protocol.

A model is one module, named in ``benign.synthetic.registry.MODELS``, that defines
- ``Batch``: a class implementing ``ModelBatch``, built as
  ``Batch(data, lrs=..., device=..., dtype=..., seed=..., **options, **run_keys)`` from the
  shared :class:`benign.synthetic.models.batch_data.BatchData` of B runs, their learning rates, the seed of
  their initialisation, the registry entry's ``options`` and the model's own run keys (the
  encoder's ``mlp_dim``);
- ``CPU_DTYPE``: the floating-point type it trains in on a CPU (float32 elsewhere).

A model registered with ``fixed_head`` (f = sum_t a_t <x_t, nu>) also defines
``head_values(split)``, the values <x_t, nu> of every token of the ``"train"`` or ``"test"``
set, (B, m, T): the selection metrics' reference losses read them (benign.synthetic.selection).
"""

from __future__ import annotations

from typing import Protocol

import torch


class ModelBatch(Protocol):
    """B runs of one model, trained together by full-batch gradient descent."""

    y: torch.Tensor  # (B, n) labels trained on, on the model's device
    y_test: torch.Tensor  # (n_test,) clean test labels, on the model's device
    noisy: torch.Tensor  # (B, n) bool, on the CPU: the label trained on is flipped

    def step(self) -> tuple[torch.Tensor, torch.Tensor]:
        """One gradient-descent step of every run; returns (f (B, n), attention (B, n, tokens))
        on the training set before the update."""
        ...

    def outputs_train(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(f, attention) on the training set, as :meth:`step` returns them, without a step."""
        ...

    def outputs_test(self, attention: bool = False):
        """f on the clean test set, (B, n_test); with ``attention``, also the attention over
        each test sample's tokens, (f, (B, n_test, tokens)), laid out as :meth:`step`'s."""
        ...

    def state(self) -> dict[str, torch.Tensor]:
        """Everything the runs need to continue exactly: a checkpoint (tensors only)."""
        ...

    def load_state(self, state: dict[str, torch.Tensor]) -> None:
        """Continue from :meth:`state`."""
        ...

    # A model the gradient flow integrates (benign.synthetic.flow) also has step(dt) and undo(),
    # which takes the last step back.
