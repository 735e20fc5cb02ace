"""Rule train_max_margin: one model's alignment runs, the alignment table of every logged step."""

import torch

from benign.core.io import log_to
from benign.core.schema import write_parquet
from benign.synthetic.max_margin_alignment import track
from benign.synthetic.schema import ALIGNMENT

log_to(snakemake.log[0])
torch.set_num_threads(snakemake.threads)
frame = track(snakemake.wildcards.max_margin_model, snakemake.params.runs, snakemake.params.log_points)
write_parquet(frame, ALIGNMENT, snakemake.output[0])
