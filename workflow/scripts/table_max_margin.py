"""Rule table_max_margin: final cosines, selections and margins at each horizon."""

from benign.io import log_to
from benign.schema import ALIGNMENT, read_parquet
from benign.tables.max_margin import max_margin

log_to(snakemake.log[0])
max_margin(read_parquet(list(snakemake.input), ALIGNMENT), snakemake.output.csv.removesuffix(".csv"),
           snakemake.params.horizons)  # fmt: skip
