"""Rule train_synthetic: train one job's runs, write the three metrics tables."""

import torch

from benign.core import job_state
from benign.core.io import log_to
from benign.core.schema import write_parquet
from benign.synthetic.schema import ATTENTION, CURVES, RUNS
from benign.synthetic.trainer import RunSpec, stop_on_signals, train_runs

log_to(snakemake.log[0])
torch.set_num_threads(snakemake.threads)
stop_on_signals()  # SLURM's notice before the time limit: checkpoint, exit, resume on the retry
runs, curves, attention = train_runs(
    [RunSpec(**run) for run in snakemake.params.runs],
    code_version=snakemake.params.code,
    checkpoint_dir=job_state.claim(job_state.ROOT / snakemake.params.job, snakemake.output),
    checkpoint_every=snakemake.config["synthetic"]["checkpoint_every"],
)
write_parquet(runs, RUNS, snakemake.output.runs)
write_parquet(curves, CURVES, snakemake.output.curves)
write_parquet(attention, ATTENTION, snakemake.output.attention)
