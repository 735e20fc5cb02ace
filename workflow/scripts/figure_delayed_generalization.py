"""Rule figure_delayed_generalization: train vs test accuracy over a long benign run."""

from benign.figures import synthetic as figures
from benign.io import log_to
from benign.schema import CURVES, RUNS, read_parquet

log_to(snakemake.log[0])
runs, curves = read_parquet(snakemake.input.runs, RUNS), read_parquet(snakemake.input.curves, CURVES)
stem = snakemake.output.png.removesuffix(".png")
figures.delayed_generalization(runs, curves, stem, loss_threshold=snakemake.params.loss_threshold)
