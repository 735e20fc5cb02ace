"""Rule figure_real_eta_heatmap: train and test loss over datasets x eta (n, seed of the sweep)."""

from benign.figures import real as figures
from benign.io import log_to
from benign.schema import REAL_RUNS, read_parquet

log_to(snakemake.log[0])
runs = read_parquet(snakemake.input.runs, REAL_RUNS)
sweep = snakemake.params.sweep
figures.real_eta_heatmap(
    runs[(runs.n == sweep["n"]) & (runs.seed == sweep["seed"])], snakemake.output.png.removesuffix(".png")
)
