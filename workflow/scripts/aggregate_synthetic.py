"""Rule aggregate_synthetic: concatenate job tables; regimes from the configured thresholds."""

from benign.io import log_to
from benign.schema import ATTENTION, CURVES, RUNS, read_parquet, write_parquet
from benign.theory import assign_regimes

log_to(snakemake.log[0])
runs = assign_regimes(read_parquet(snakemake.input.runs, RUNS), **snakemake.params.regime)
write_parquet(runs, RUNS, snakemake.output.runs)
for name, schema in (("curves", CURVES), ("attention", ATTENTION)):
    write_parquet(read_parquet(snakemake.input[name], schema), schema, snakemake.output[name])
