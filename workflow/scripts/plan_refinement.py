"""Checkpoint plan_refinement: the refinement and step-convergence jobs of the atlas, planned from
its coarse runs."""

import json

from benign.analysis.refinement import convergence_runs, refinement_runs
from benign.analysis.theory import Criteria
from benign.core.io import atomic_path, log_to
from benign.core.schema import read_parquet
from benign.plan.resources import pack
from benign.synthetic.schema import CURVES, RUNS

log_to(snakemake.log[0])
runs, curves = read_parquet(snakemake.input.runs, RUNS), read_parquet(snakemake.input.curves, CURVES)
params = snakemake.params
refine, convergence, criteria = params.refine, params.convergence, Criteria(**params.regime)
refine_setting, convergence_setting = params.settings
refine_prefix, convergence_prefix = params.prefixes  # the jobs' ids, before their number
# refined at every horizon a table reads the crossings at: the fits' and the boundaries along time
refined = sorted({*params.horizons, *(params.along_time or ())})
planned = refinement_runs(runs, curves, refined, refine["points"], refine["seeds"], params.log_points,
                          criteria, refine_setting)  # fmt: skip
jobs = pack(planned, refine_prefix, refine["batches_per_job"], params.cluster)
if convergence:
    checked = convergence_runs(runs, curves, max(params.horizons), refine["points"], convergence["seeds"],
                               refine["seeds"], convergence["factor"], params.log_points, criteria,
                               convergence_setting)  # fmt: skip
    jobs |= pack(checked, convergence_prefix, convergence["batches_per_job"], params.cluster)
with atomic_path(snakemake.output[0]) as tmp:
    tmp.write_text(json.dumps(jobs, indent=1))
