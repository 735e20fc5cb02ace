"""Checkpoint plan_refinement: the refinement and step-convergence jobs of the atlas, planned from
its coarse runs by the job the plan worked out (benign.plan.refinement_job)."""

import json

from benign.core.io import atomic_path, log_to
from benign.core.schema import read_parquet
from benign.plan.refinement_job import RefinementJob
from benign.synthetic.schema import CURVES, RUNS

log_to(snakemake.log[0])
job = RefinementJob(**snakemake.params.job)
jobs = job.jobs(read_parquet(snakemake.input.runs, RUNS), read_parquet(snakemake.input.curves, CURVES))
with atomic_path(snakemake.output[0]) as tmp:
    tmp.write_text(json.dumps(jobs, indent=1))
