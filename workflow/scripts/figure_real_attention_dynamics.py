"""Rule figure_real_attention_dynamics: max attention from position 0 vs epoch, per data set."""

from benign.figures import real as figures
from benign.io import log_to
from benign.schema import REAL_ATTENTION, REAL_RUNS, read_parquet

log_to(snakemake.log[0])
grid = snakemake.params.grid
runs = read_parquet(snakemake.input.runs, REAL_RUNS)
runs = runs[runs.n.isin(grid["n"]) & runs.seed.isin(grid["seeds"]) & runs.eta.isin(grid["eta"])]
attention = read_parquet(snakemake.input.attention, REAL_ATTENTION)
figures.real_attention_dynamics(
    attention[attention.run_id.isin(runs.run_id)], runs, snakemake.output.png.removesuffix(".png")
)
