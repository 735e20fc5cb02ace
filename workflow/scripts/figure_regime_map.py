"""Rule figure_regime_map: the regime atlas per n and horizon, with fitted and theory boundaries."""

import pandas as pd

from benign.figures import atlas as figures
from benign.io import log_to
from benign.schema import CURVES, RUNS, read_parquet
from benign.theory import Criteria, atlas_labels

log_to(snakemake.log[0])
runs, curves = read_parquet(snakemake.input.runs, RUNS), read_parquet(snakemake.input.curves, CURVES)
runs, labels = atlas_labels(runs, curves, snakemake.params.settings, snakemake.params.fits["horizons"],
                            Criteria(**snakemake.params.regime))  # fmt: skip
figures.regime_map(runs, labels, pd.read_csv(snakemake.input.fits), snakemake.output.png.removesuffix(".png"))
