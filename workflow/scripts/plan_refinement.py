"""Checkpoint plan_refinement: the refinement jobs of the atlas, planned from its coarse runs."""

import json

from benign.io import atomic_path, log_to
from benign.refinement import refinement_jobs
from benign.schema import CURVES, RUNS, read_parquet
from benign.theory import Criteria

log_to(snakemake.log[0])
runs, curves = read_parquet(snakemake.input.runs, RUNS), read_parquet(snakemake.input.curves, CURVES)
refine = snakemake.params.refine
jobs = refinement_jobs(runs, curves, refine["horizon"], refine["points"], snakemake.params.log_points,
                       Criteria(**snakemake.params.regime), snakemake.params.setting, snakemake.params.prefix,
                       refine["batches_per_job"])  # fmt: skip
with atomic_path(snakemake.output[0]) as tmp:
    tmp.write_text(json.dumps(jobs, indent=1))
