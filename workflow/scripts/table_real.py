"""Rule table_real: Table 2 (eta 0.1) or Table 6 (eta 0, 0.2) on the main grid."""

from benign.core.io import log_to
from benign.core.schema import read_parquet
from benign.real.schema import REAL_RUNS
from benign.tables import real as tables

log_to(snakemake.log[0])
runs = read_parquet(snakemake.input.runs, REAL_RUNS)
grid = snakemake.params.grid
runs = runs[runs.n.isin(grid["n"]) & runs.seed.isin(grid["seeds"])]
stem = snakemake.output.csv.removesuffix(".csv")
tables.real_results(
    runs, snakemake.input.reference, stem, snakemake.params.etas, snakemake.input.summary, snakemake.params.notes
)
