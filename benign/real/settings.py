"""The real-data protocol's defaults, one owner: the paper's phase lengths and optimiser
(docs/real_protocol.md), the progress interval and the recorded epochs. The library's functions
take their defaults from here, and the config schema (benign/plan/schema.py) writes the
defaults of ``real.protocol`` from here. Torch-free."""

from __future__ import annotations

PROTOCOL = {
    "pretrain_epochs": 300,  # phase 1 (the head, clean rows)
    "finetune_epochs": 2000,  # phase 2 (query and key, noisy rows)
    "lr": 5e-5,  # AdamW, both phases
    "batch_size": 16,
    "clip": 1.0,  # gradient-norm clip
    "log_every": 10,  # epochs between progress lines
    "record_epochs": 30,  # phase 2's recorded epochs: a count of log-spaced epochs, or a list
}
