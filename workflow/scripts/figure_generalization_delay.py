"""Rule figure_generalization_delay: Kaplan-Meier curves of the fit and generalization times per SNR band."""

from benign.figures import atlas as figures
from benign.io import log_to
from benign.schema import CURVES, RUNS, read_parquet
from benign.theory import in_sweeps

log_to(snakemake.log[0])
runs, curves = read_parquet(snakemake.input.runs, RUNS), read_parquet(snakemake.input.curves, CURVES)
runs = runs[in_sweeps(runs, snakemake.params.settings)].drop_duplicates("run_id")
curves = curves[curves["run_id"].isin(runs["run_id"])]
stem = snakemake.output.png.removesuffix(".png")
figures.generalization_delay(runs, curves, stem, snakemake.params.fits["survival_bands"])
