"""Rule aggregate_synthetic: concatenate job tables; regimes and milestones from the configured criteria."""

from benign.io import log_to
from benign.milestones import annotate
from benign.schema import ATTENTION, CURVES, RUNS, read_parquet, write_parquet
from benign.theory import Criteria, assign_regimes

log_to(snakemake.log[0])
criteria = Criteria(**snakemake.params.regime)
curves = read_parquet(snakemake.input.curves, CURVES)
runs = annotate(assign_regimes(read_parquet(snakemake.input.runs, RUNS), criteria), curves, criteria)
write_parquet(runs, RUNS, snakemake.output.runs)
write_parquet(curves, CURVES, snakemake.output.curves)
write_parquet(read_parquet(snakemake.input.attention, ATTENTION), ATTENTION, snakemake.output.attention)
