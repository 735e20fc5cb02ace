"""Rule features_real: run the frozen backbone once; keep what the final layer needs."""

import json
from pathlib import Path

import torch

from benign.core.io import log_to
from benign.real.features import compute_features
from benign.real.protocol import finetune_pool

log_to(snakemake.log[0])
torch.set_num_threads(snakemake.threads)
max_n, seeds = snakemake.params.rows
n_train = json.loads((Path(snakemake.input[0]) / "meta.json").read_text())["n_train"]
rows = finetune_pool(n_train, snakemake.params.pretrain_size, max_n, seeds)
compute_features(
    snakemake.params.backbone, snakemake.input[0], snakemake.output[0], train_rows=rows, part=snakemake.params.part
)
