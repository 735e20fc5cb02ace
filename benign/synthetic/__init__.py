"""The synthetic half (docs/data.md, docs/model.md), in reading order:

1. ``registry.py``: the one list of models; ``spec.py``: the one list of a run's parameters,
   and what each one is; ``schema.py``: the columns of the half's tables.
2. ``data_model.py``: the data model (class signals, weak tokens, noise), with
   ``label_noise.py`` for which labels flip, and ``gram.py`` for the token model's data and W0
   drawn exactly in law in 2(nT + 2) coordinates (the Gram engine: a run's cost free of d).
3. ``models/``: the token-selection model and the one-layer encoder, many runs as one tensor
   program (``interface.py`` is what every model implements; ``batch_data.py`` the shared data
   draw of a batch).
4. ``speed/``: the per-step machinery the models use (deferred updates, CUDA graphs).
5. ``selection.py``: which tokens attention selects, the attention gap Lambda and the fixed
   head's reference losses, with the theory's clock g (``clock.py``): what the trainer logs.
6. ``trainer.py``: full-batch gradient descent over batches of runs, with the metrics of every
   logged step and checkpoints; ``flow.py``: the token models' gradient flow with an adaptive
   step, the trainer's other integrator (times gradient descent cannot reach).
7. ``token_projection.py``: Figure 1's computation (no training).
8. ``max_margin.py``: the attention-SVM direction of a selection; ``max_margin_alignment.py``:
   runs tracked against it.

9. ``costs.py``: what a batch of runs costs, per model (the planner sizes jobs with it).

Imports only ``core``, and nothing of ``real``; every layer above imports it.
"""
