"""Rule table_regime_boundaries: the fitted regime boundaries beside the theory's."""

from benign.io import log_to
from benign.schema import CURVES, RUNS, read_parquet
from benign.tables import boundaries as tables
from benign.theory import atlas_labels

log_to(snakemake.log[0])
runs, curves = read_parquet(snakemake.input.runs, RUNS), read_parquet(snakemake.input.curves, CURVES)
fits, regime = snakemake.params.fits, snakemake.params.regime
runs, labels = atlas_labels(runs, curves, fits["sweeps"], fits["horizons"], **regime)
stem = snakemake.output.csv.removesuffix(".csv")
tables.regime_boundaries(runs, labels, stem, tables.criteria_text(**regime), draws=fits["bootstrap"])
