"""Rule figure_token_projection: paper Figure 1."""

import pandas as pd

from benign.figures import synthetic as figures
from benign.io import log_to
from benign.token_projection import projection_config

log_to(snakemake.log[0])
cfg, _ = projection_config(snakemake.params.projection)
figures.token_projection(pd.read_parquet(snakemake.input[0]), cfg, snakemake.output.png.removesuffix(".png"))
