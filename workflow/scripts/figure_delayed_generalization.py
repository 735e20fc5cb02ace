"""Rule figure_delayed_generalization: train vs test accuracy over a long benign run."""

from benign import figures
from benign.io import log_to
from benign.schema import CURVES, RUNS, read_parquet

log_to(snakemake.log[0])
figures.delayed_generalization(
    read_parquet(snakemake.input.runs, RUNS),
    read_parquet(snakemake.input.curves, CURVES),
    snakemake.output.png.removesuffix(".png"),
    test_threshold=snakemake.params.test_threshold,
)
