"""Rule aggregate_synthetic: concatenate job tables; regimes and milestones from the configured criteria."""

from benign.io import log_to
from benign.milestones import Criteria, annotate
from benign.schema import ATTENTION, CURVES, RUNS, read_parquet, write_parquet
from benign.theory import assign_regimes

log_to(snakemake.log[0])
curves = read_parquet(snakemake.input.curves, CURVES)
runs = assign_regimes(read_parquet(snakemake.input.runs, RUNS), **snakemake.params.regime)
runs = annotate(runs, curves, Criteria(**snakemake.params.milestones))
write_parquet(runs, RUNS, snakemake.output.runs)
write_parquet(curves, CURVES, snakemake.output.curves)
write_parquet(read_parquet(snakemake.input.attention, ATTENTION), ATTENTION, snakemake.output.attention)
