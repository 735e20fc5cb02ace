"""Rule table_delay_scan: in the benign band, does attention select only after the flipped labels are fitted?"""

from benign.io import log_to
from benign.schema import CURVES, RUNS, read_parquet
from benign.tables import delay_scan as tables
from benign.theory import in_sweeps

log_to(snakemake.log[0])
runs, curves = read_parquet(snakemake.input.runs, RUNS), read_parquet(snakemake.input.curves, CURVES)
runs = runs[in_sweeps(runs, [snakemake.params.sweep])]  # milestones set when the runs were gathered
curves = curves[curves["run_id"].isin(runs["run_id"])]
tables.delay_scan(runs, curves, snakemake.output.csv.removesuffix(".csv"))
