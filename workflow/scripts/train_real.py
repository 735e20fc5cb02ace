"""Rule train_real: phase 2 (query/key, noisy) for one cell, every eta, from its seed's phase-1 head."""

import torch

from benign.core import job_state
from benign.core.io import log_to
from benign.core.schema import write_parquet
from benign.core.stopping import stop_on_signals
from benign.real.heads import load_heads
from benign.real.protocol import run_cell
from benign.real.schema import REAL_ATTENTION, REAL_CURVES, REAL_RUNS

log_to(snakemake.log[0])
torch.set_num_threads(snakemake.threads)
stop_on_signals()  # SLURM's signal at the time limit: checkpoint, exit 75, resume on the retry
cell, protocol = snakemake.params.cell, snakemake.params.protocol
runs, attention, curves = run_cell(
    list(snakemake.input.features),
    load_heads(snakemake.input.heads),
    snakemake.params.entry,
    n=cell["n"],
    etas=cell["etas"],
    seed=cell["seed"],
    code_version=snakemake.params.code,
    checkpoint=job_state.claim(job_state.ROOT / "real" / snakemake.wildcards.cell, snakemake.output) / "phase2.pt",
    checkpoint_every=snakemake.config["real"]["checkpoint_every"],  # not a param: changing it reruns nothing
    records=protocol["record_epochs"],
    **{k: protocol[k] for k in ("finetune_epochs", "lr", "batch_size", "clip", "log_every")},
)
write_parquet(runs, REAL_RUNS, snakemake.output.runs)
write_parquet(attention, REAL_ATTENTION, snakemake.output.attention)
write_parquet(curves, REAL_CURVES, snakemake.output.curves)
