"""Speed machinery of the one-layer encoder, kept out of its math (benign.synthetic.models.encoder).

Nothing here changes a result beyond floating-point rounding, and every piece is tested against
the plain computation:
- ``settings``: every knob, and the environment variables that set them, in one place;
- ``deferred``: gradient-descent updates of a matrix kept as low-rank factors, applied later in
  one product;
- ``cuda_graphs``: a training step captured once as a CUDA graph and replayed.
"""
