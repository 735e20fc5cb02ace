"""Rule figure_softmax_dynamics: paper Figures 3 (token model) and 6 (encoder)."""

from benign.core.io import log_to
from benign.core.schema import read_parquet
from benign.figures import dynamics as figures
from benign.synthetic.schema import ATTENTION, RUNS

log_to(snakemake.log[0])
figures.softmax_dynamics(
    read_parquet(snakemake.input.runs, RUNS),
    read_parquet(snakemake.input.attention, ATTENTION),
    snakemake.output.png.removesuffix(".png"),
    model=snakemake.params.model,
)
