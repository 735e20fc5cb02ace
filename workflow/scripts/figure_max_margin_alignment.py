"""Rule figure_max_margin_alignment: the cosine with the SVM direction against step, and the selections."""

from benign.figures.max_margin import max_margin_alignment
from benign.io import log_to
from benign.schema import ALIGNMENT, read_parquet

log_to(snakemake.log[0])
max_margin_alignment(read_parquet(list(snakemake.input), ALIGNMENT), snakemake.output.png.removesuffix(".png"))
