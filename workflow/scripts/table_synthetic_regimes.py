"""Rule table_synthetic_regimes: the named settings with final metrics and regime."""

from benign.io import log_to
from benign.schema import CURVES, RUNS, read_parquet
from benign.tables import synthetic as tables
from benign.theory import Criteria

log_to(snakemake.log[0])
tables.synthetic_regimes(
    read_parquet(snakemake.input.runs, RUNS),
    snakemake.output.csv.removesuffix(".csv"),
    curves=read_parquet(snakemake.input.curves, CURVES),
    horizons=snakemake.params.horizons,
    criteria=Criteria(**snakemake.params.regime),
)
