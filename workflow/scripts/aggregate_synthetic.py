"""Rules aggregate_synthetic (a model's job tables) and aggregate_sweep (a sweep's, without its
attention): concatenate job tables; regimes and milestones from the configured criteria."""

from benign.analysis.milestones import annotate
from benign.analysis.theory import Criteria, assign_regimes
from benign.core.io import log_to
from benign.core.schema import read_parquet, write_parquet
from benign.synthetic.schema import ATTENTION, CURVES, RUNS

log_to(snakemake.log[0])
criteria = Criteria(**snakemake.params.regime)
curves = read_parquet(snakemake.input.curves, CURVES)
runs = annotate(assign_regimes(read_parquet(snakemake.input.runs, RUNS), criteria), curves, criteria)
write_parquet(runs, RUNS, snakemake.output.runs)
write_parquet(curves, CURVES, snakemake.output.curves)
if "attention" in snakemake.output.keys():
    write_parquet(read_parquet(snakemake.input.attention, ATTENTION), ATTENTION, snakemake.output.attention)
