"""Rule figure_loss_heatmap: paper Figures 5 (token model) and 7 (encoder), with the fitted
regime boundaries where the model's atlas was fitted."""

import pandas as pd

from benign.core.io import log_to
from benign.core.schema import read_parquet
from benign.figures import heatmaps as figures
from benign.synthetic.schema import RUNS

log_to(snakemake.log[0])
figures.loss_heatmap(
    read_parquet(snakemake.input.runs, RUNS),
    snakemake.output.png.removesuffix(".png"),
    fits=pd.read_csv(snakemake.input.fits) if "fits" in snakemake.input.keys() else None,
    model=snakemake.params.model,
    **snakemake.params.boundaries,
)
