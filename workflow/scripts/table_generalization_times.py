"""Rule table_generalization_times: fit and generalization times as censored survival times."""

from benign.io import log_to
from benign.schema import CURVES, RUNS, read_parquet
from benign.tables.generalization_times import generalization_times
from benign.theory import in_sweeps

log_to(snakemake.log[0])
runs, curves = read_parquet(snakemake.input.runs, RUNS), read_parquet(snakemake.input.curves, CURVES)
runs = runs[in_sweeps(runs, snakemake.params.settings)].drop_duplicates("run_id")
curves = curves[curves["run_id"].isin(runs["run_id"])]
generalization_times(runs, curves, snakemake.output.csv.removesuffix(".csv"), snakemake.params.fits["survival_bands"])
