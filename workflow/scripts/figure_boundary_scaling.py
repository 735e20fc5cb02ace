"""Rule figure_boundary_scaling: each fitted exponent against the horizon, beside the theory's."""

import pandas as pd

from benign.figures import atlas as figures
from benign.io import log_to

log_to(snakemake.log[0])
figures.boundary_scaling(pd.read_csv(snakemake.input.fits), snakemake.output.png.removesuffix(".png"))
