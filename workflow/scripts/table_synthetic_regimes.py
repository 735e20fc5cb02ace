"""Rule table_synthetic_regimes: the named settings with final metrics and regime."""

from benign import tables
from benign.io import log_to
from benign.schema import RUNS, read_parquet

log_to(snakemake.log[0])
tables.synthetic_regimes(
    read_parquet(snakemake.input.runs, RUNS), snakemake.output.csv.removesuffix(".csv"), **snakemake.params.regime
)
