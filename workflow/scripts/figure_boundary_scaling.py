"""Rule figure_boundary_scaling: the fitted boundaries against d and n on log-log axes."""

import pandas as pd

from benign.figures import synthetic as figures
from benign.io import log_to
from benign.schema import CURVES, RUNS, read_parquet
from benign.theory import atlas_labels

log_to(snakemake.log[0])
runs, curves = read_parquet(snakemake.input.runs, RUNS), read_parquet(snakemake.input.curves, CURVES)
runs, labels = atlas_labels(runs, curves, snakemake.params.fits["sweeps"], snakemake.params.fits["horizons"],
                            **snakemake.params.regime)  # fmt: skip
figures.boundary_scaling(runs, labels, pd.read_csv(snakemake.input.fits), snakemake.output.png.removesuffix(".png"))
