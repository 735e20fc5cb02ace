"""Rule table_regime_boundaries: one fit per boundary and horizon over the atlas runs, beside the theory's exponents."""

from benign.io import log_to
from benign.schema import CURVES, RUNS, read_parquet
from benign.tables import boundaries as tables
from benign.theory import Criteria, atlas_labels

log_to(snakemake.log[0])
runs, curves = read_parquet(snakemake.input.runs, RUNS), read_parquet(snakemake.input.curves, CURVES)
fits, criteria = snakemake.params.fits, Criteria(**snakemake.params.regime)
runs, labels = atlas_labels(runs, curves, snakemake.params.settings, fits["horizons"], criteria)
stem = snakemake.output.csv.removesuffix(".csv")
tables.regime_boundaries(runs, labels, stem, tables.criteria_text(criteria), fits["resolution"])
