"""Rule figure_generalization_delay: fit and generalization milestones against SNR."""

from benign.figures import synthetic as figures
from benign.io import log_to
from benign.schema import RUNS, read_parquet

log_to(snakemake.log[0])
stem = snakemake.output.png.removesuffix(".png")
figures.generalization_delay(read_parquet(snakemake.input.runs, RUNS), stem, snakemake.params.fits["sweeps"])
