"""Rule token_projection_points: Figure 1's selected tokens under a hand-set query."""

from benign.core.io import log_to
from benign.synthetic.token_projection import projection_config, token_projection

log_to(snakemake.log[0])
cfg, lambdas = projection_config(snakemake.params.projection)
token_projection(cfg, lambdas).to_parquet(snakemake.output[0])
