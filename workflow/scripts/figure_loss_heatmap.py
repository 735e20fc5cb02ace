"""Rule figure_loss_heatmap: paper Figures 5 (token model) and 7 (encoder)."""

from benign.figures import synthetic as figures
from benign.io import log_to
from benign.schema import RUNS, read_parquet

log_to(snakemake.log[0])
figures.loss_heatmap(
    read_parquet(snakemake.input.runs, RUNS),
    snakemake.output.png.removesuffix(".png"),
    model=snakemake.params.model,
    **snakemake.params.boundaries,
)
