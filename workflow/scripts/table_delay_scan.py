"""Rule table_delay_scan: where test accuracy rises only after the training set is fitted."""

from benign.io import log_to
from benign.schema import CURVES, RUNS, read_parquet
from benign.tables import delay_scan as tables

log_to(snakemake.log[0])
runs, curves = read_parquet(snakemake.input.runs, RUNS), read_parquet(snakemake.input.curves, CURVES)
runs = runs[runs["setting"] == snakemake.params.sweep]  # milestones set when the runs were gathered
curves = curves[curves["run_id"].isin(runs["run_id"])]
tables.delay_scan(runs, curves, snakemake.output.csv.removesuffix(".csv"), **snakemake.params.criteria)
