"""Checkpoint plan_refinement: the refinement jobs of the atlas, planned from its coarse runs."""

import json

from benign.analysis.refinement import refinement_jobs
from benign.analysis.theory import Criteria
from benign.core.io import atomic_path, log_to
from benign.core.schema import CURVES, RUNS, read_parquet

log_to(snakemake.log[0])
runs, curves = read_parquet(snakemake.input.runs, RUNS), read_parquet(snakemake.input.curves, CURVES)
refine = snakemake.params.refine
jobs = refinement_jobs(runs, curves, refine["horizon"], refine["points"], snakemake.params.log_points,
                       Criteria(**snakemake.params.regime), snakemake.params.setting, snakemake.params.prefix,
                       refine["batches_per_job"])  # fmt: skip
with atomic_path(snakemake.output[0]) as tmp:
    tmp.write_text(json.dumps(jobs, indent=1))
