"""Rule limit_atlas: the atlas's t = infinity labels and its global selection's kinds per run."""

import logging

import torch

from benign.analysis import first_step
from benign.analysis.limit import limit_sides
from benign.analysis.theory import Criteria, in_sweeps
from benign.core.io import log_to
from benign.core.schema import read_parquet, write_parquet
from benign.synthetic.limit_schema import LIMIT, LIMIT_SELECTION
from benign.synthetic.schema import RUNS
from benign.synthetic.svm_limit import limit_atlas, selection_kinds

log_to(snakemake.log[0])
torch.set_num_threads(snakemake.threads)
criteria = Criteria(**snakemake.params.regime)
runs = read_parquet(snakemake.input.runs, RUNS)
atlas = runs[in_sweeps(runs, snakemake.params.settings) & (runs["status"] == "ok")].drop_duplicates("run_id")
progress = logging.getLogger("benign.synthetic.svm_limit").info


def law(line: dict) -> float:
    """The first step's hard-max crossing at the line: where its limit is first looked for."""
    return first_step.boundary("selects_hardmax", line["d"], int(line["n"]), int(line["T"]), line["rho"], line["eta"],
                               line["sigma"], criteria=criteria)  # fmt: skip


sides = lambda frame: limit_sides(frame, criteria)  # noqa: E731
limit = limit_atlas(atlas, sides, snakemake.params.resolution, snakemake.params.horizon, law, progress)
write_parquet(limit, LIMIT, snakemake.output.limit)
write_parquet(selection_kinds(atlas), LIMIT_SELECTION, snakemake.output.selection)
