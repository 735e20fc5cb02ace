"""Rule aggregate_real: concatenate the real-data job tables."""

from benign.core.io import log_to
from benign.core.schema import read_parquet, write_parquet
from benign.real.schema import REAL_ATTENTION, REAL_CURVES, REAL_RUNS

log_to(snakemake.log[0])
for name, schema in (("runs", REAL_RUNS), ("attention", REAL_ATTENTION), ("curves", REAL_CURVES)):
    write_parquet(read_parquet(snakemake.input[name], schema), schema, snakemake.output[name])
