"""Rule pretrain_real: phase 1 (the head, on clean rows) for every seed of one data set."""

import torch

from benign.core.io import log_to
from benign.real.heads import save_heads
from benign.real.protocol import pretrain

log_to(snakemake.log[0])
torch.set_num_threads(snakemake.threads)
protocol = snakemake.params.protocol
heads = pretrain(
    list(snakemake.input),
    snakemake.params.entry,
    snakemake.params.seeds,
    **{k: protocol[k] for k in ("pretrain_epochs", "lr", "batch_size", "clip", "log_every")},
)
save_heads(heads, snakemake.output[0])
