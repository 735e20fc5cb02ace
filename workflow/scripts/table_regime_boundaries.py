"""Rule table_regime_boundaries: the fitted regime boundaries beside the theory's."""

from benign.io import log_to
from benign.schema import CURVES, RUNS, read_parquet
from benign.tables import boundaries as tables

log_to(snakemake.log[0])
runs, curves = read_parquet(snakemake.input.runs, RUNS), read_parquet(snakemake.input.curves, CURVES)
fits = snakemake.params.fits
tables.regime_boundaries(runs, curves, snakemake.output.csv.removesuffix(".csv"), fits["sweeps"], fits["horizons"],
                         draws=fits["bootstrap"], **snakemake.params.regime)  # fmt: skip
