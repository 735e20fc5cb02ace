"""Rule table_regime_model: the fitted boundaries per (d, n) line, which `python -m benign regime` reads."""

from benign.io import log_to
from benign.schema import CURVES, RUNS, read_parquet
from benign.tables import boundaries as tables
from benign.theory import Criteria, atlas_labels

log_to(snakemake.log[0])
runs, curves = read_parquet(snakemake.input.runs, RUNS), read_parquet(snakemake.input.curves, CURVES)
fits = snakemake.params.fits
runs, labels = atlas_labels(
    runs, curves, snakemake.params.settings, fits["horizons"], Criteria(**snakemake.params.regime)
)
tables.regime_model(runs, labels, snakemake.output.csv.removesuffix(".csv"), fits["resolution"])
