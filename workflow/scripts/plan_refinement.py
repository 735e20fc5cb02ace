"""Checkpoint plan_refinement: the refinement jobs of the atlas, planned from its coarse runs."""

import json

from benign.analysis.refinement import refinement_runs
from benign.analysis.theory import Criteria
from benign.config.resources import pack
from benign.core.io import atomic_path, log_to
from benign.core.schema import read_parquet
from benign.synthetic.schema import CURVES, RUNS

log_to(snakemake.log[0])
runs, curves = read_parquet(snakemake.input.runs, RUNS), read_parquet(snakemake.input.curves, CURVES)
refine = snakemake.params.refine
planned = refinement_runs(runs, curves, refine["horizon"], refine["points"], snakemake.params.log_points,
                          Criteria(**snakemake.params.regime), snakemake.params.setting)  # fmt: skip
jobs = pack(planned, snakemake.params.prefix, refine["batches_per_job"], snakemake.params.cluster)
with atomic_path(snakemake.output[0]) as tmp:
    tmp.write_text(json.dumps(jobs, indent=1))
