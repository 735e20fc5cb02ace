"""The workflow's plan (benign.workplan.WorkPlan) and what only Snakemake gives: a rule's outputs,
a checkpoint's file, a retry's attempt. Torch-free: every cluster job re-parses this."""

import json
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

sys.path.insert(
    0, str(Path(workflow.basedir))
)  # the library, also when not pip-installed
from benign.core import job_state, paths
from benign.core.fingerprint import fingerprint
from benign.plan import ConfigError
from benign.plan import resources as rs
from benign.workplan import WorkPlan

try:  # readable messages, the schema's defaults, the jobs, then every artifact entry checked
    W = WorkPlan.load(
        config, Path(workflow.basedir) / "workflow/schemas/config.schema.yaml"
    )
except ConfigError as err:
    raise WorkflowError(f"invalid configuration:\n{err}") from None
except ValueError as err:  # an entry of the artifact table against its function
    raise WorkflowError(str(err)) from None
for message in W.plan.warnings:
    logger.warning(f"config warning: {message}")
SCRIPTS = Path(workflow.basedir) / "workflow/scripts"


wildcard_constraints:
    **W.wildcard_constraints(),


def need(field, of):
    """A job's request ``field`` (mem_mb or runtime_min) from its need ``of(wildcards)``, larger
    on each retry (benign/plan/resources.py)."""
    return lambda wc, attempt: getattr(
        rs.for_attempt(of(wc), attempt, W.plan.cluster), field
    )


def code(script, *modules):
    """The fingerprint of what a rule's script runs (benign/core/fingerprint.py), with the
    ``modules`` it picks by name: editing a module reruns exactly the jobs that import it.
    """
    return fingerprint(SCRIPTS / script, *modules)


def refinement_jobs(model):
    """{job id: runs} of a model's refinement, from the checkpoint's plan ({} if not refined)."""
    if not W.refines(model):
        return {}
    with open(checkpoints.plan_refinement.get().output[0]) as plan:
        return json.load(plan)


def job_tables(model, table):
    """A model's job tables of one kind: its planned jobs', and its refinement's."""
    return expand(paths.SYNTHETIC_JOB, job=W.jobs_of(model), table=table) + expand(
        paths.REFINEMENT_JOB, rjob=list(refinement_jobs(model)), table=table
    )


def sweep_tables(model, sweep, table):
    """A sweep's job tables of one kind, in the model's order: the jobs holding its runs, and
    where it is the refined sweep, its refinement's and step check's jobs."""
    refined = W.refines(model) and sweep == W.refine["sweep"]
    return expand(
        paths.SYNTHETIC_JOB, job=W.sweep_jobs(model, sweep), table=table
    ) + expand(
        paths.REFINEMENT_JOB,
        rjob=list(refinement_jobs(model)) if refined else [],
        table=table,
    )


def training_runs():
    """Every training job's runs table (each run's wall time: the summary's job time per part)."""
    real = expand(paths.REAL_JOB, cell=W.plan.real_cells, table="runs")
    return [f for model in W.models for f in job_tables(model, "runs")] + real


def fitted_tables(table):
    """The fitted sweeps' job tables of one kind, and their refinement's (not the step check's):
    what the limit reads, so that it starts once the atlas is trained, not the whole model.
    """
    refine = W.refinement_prefixes()[0] + "_"
    refined = [
        job for job in refinement_jobs(W.fits["model"]) if job.startswith(refine)
    ]
    return expand(paths.SYNTHETIC_JOB, job=W.fitted_jobs, table=table) + expand(
        paths.REFINEMENT_JOB, rjob=refined, table=table
    )


def artifact_input(spec, model=None):
    """The files an artifact input names (benign.workplan.WorkPlan.input_files)."""
    return W.input_files(spec, model, expand)
