"""Rule fetch_dataset: write the verified local copy of one data set."""

from benign.core.io import log_to
from benign.real.datasets import fetch_dataset

log_to(snakemake.log[0])
fetch_dataset(snakemake.params.entry, snakemake.output[0])
