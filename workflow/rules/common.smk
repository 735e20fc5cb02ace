"""Imports, config validation and input functions. Torch-free: every cluster job re-parses this."""

import json
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

sys.path.insert(
    0, str(Path(workflow.basedir))
)  # the library, also when not pip-installed
from benign.core import job_state, paths
from benign.synthetic import registry
from benign.real import registry as real_registry
from benign.plan import ConfigError, jobs as plan
from benign.artifacts import entry as artifact_entry
from benign.artifacts import table as artifacts
from benign.plan import resources as rs
from benign.plan import validate as cv
from benign.plan.load import load
from benign.core.fingerprint import fingerprint

SCHEMA = Path(workflow.basedir) / "workflow/schemas/config.schema.yaml"
try:
    PLAN = load(
        config, SCHEMA
    )  # readable messages, the schema's defaults, then the jobs
except ConfigError as err:
    raise WorkflowError(f"invalid configuration:\n{err}") from None
for message in PLAN.warnings:
    logger.warning(f"config warning: {message}")
CLUSTER = PLAN.cluster
SYN_JOBS = PLAN.synthetic_jobs
REAL_CELLS = PLAN.real_cells
REAL_NEEDS = PLAN.real_needs
FEATURE_PARTS = PLAN.feature_parts
MM_RUNS = PLAN.max_margin_runs
# the values of a wildcard that an input kind spans (benign.artifacts.entry.InputKind.expand)
SPANNED = {"max_margin_model": list(MM_RUNS)}

SYN = config["synthetic"]
FITS = SYN.get("boundary_fits", {})
# The atlas's refinement around its transitions (docs/regimes.md#refinement), and its
# step-convergence runs (docs/regimes.md#step-convergence), if configured.
REFINE = FITS.get("refine")
REFINE_SETTING = f"{REFINE['sweep']}_refine" if REFINE else None
CONVERGENCE = FITS.get("convergence")
CONVERGENCE_SETTING = f"{REFINE['sweep']}_convergence" if CONVERGENCE else None
# The settings whose runs the atlas's tables and figures read, each run once.
ATLAS_SETTINGS = [*FITS.get("sweeps", []), *([REFINE_SETTING] if REFINE else [])]
# The token sweep read by the delay-scan table (docs/regimes.md#delay-scan), if configured.
DELAY_SCAN = "delay_scan"
HAS_DELAY_SCAN = DELAY_SCAN in SYN.get("token", {}).get("sweeps", {})
# The token sweep read by the one-step table and figure (docs/regimes.md#the-one-step-regime).
ONE_STEP = "one_step"
HAS_ONE_STEP = ONE_STEP in SYN.get("token", {}).get("sweeps", {})
# The token_p_w0 sweep read beside the atlas by the W-control table: the atlas's lines with W
# frozen at W0 (docs/regimes.md#what-the-atlass-boundaries-are-boundaries-of), if configured.
W_CONTROL = "atlas_w0"
W0_SWEEPS = SYN.get("token_p_w0", {}).get("sweeps", {})
HAS_W_CONTROL = FITS.get("model") == "token" and W_CONTROL in W0_SWEEPS
# the regime predictor's check off the atlas's grid (docs/regimes.md#the-predictors-check)
PREDICTOR_CHECK = "atlas_check"
HAS_PREDICTOR_CHECK = FITS.get("model") == "token" and PREDICTOR_CHECK in SYN.get(
    "token", {}
).get("sweeps", {})
MODELS = plan.configured_models(config)
SCRIPTS = Path(workflow.basedir) / "workflow/scripts"


GPU = int(CLUSTER.device == "cuda")  # the training rules' `gpu` resource
# The group of the short jobs (aggregation, tables, figures, the summary), set by a cluster's
# profile (config cluster.group): they go together, in one submission (profiles/slurm:
# group-components). None in a local run. Training jobs are not grouped (docs/cluster.md).
SHORT = CLUSTER.group


def need(field, of):
    """A job's request ``field`` (mem_mb or runtime_min) from ``of(wildcards)``, its need
    (benign/plan/resources.py), larger on each retry."""
    return lambda wc, attempt: getattr(rs.for_attempt(of(wc), attempt, CLUSTER), field)


def synthetic_job(wc):
    """A synthetic training job's need, from its runs."""
    return rs.synthetic_job_need(SYN_JOBS[wc.job], CLUSTER.device)


def max_margin_job(wc):
    """An attention-SVM job's need: its runs are token-model batches."""
    return rs.synthetic_job_need(MM_RUNS[wc.max_margin_model], CLUSTER.device)


def real_job(rule, wildcard):
    """A real-data job's need: ``REAL_NEEDS[rule]`` at the value of its ``wildcard``."""
    return lambda wc: REAL_NEEDS[rule][getattr(wc, wildcard)]


def feature_files(dataset):
    """The parts of a data set's feature cache (rule features_real)."""
    parts = FEATURE_PARTS[dataset]
    return [
        paths.fill(paths.FEATURES, dataset=dataset, part=k, parts=parts)
        for k in range(parts)
    ]


def code(script, *modules):
    """The fingerprint of what a rule's script runs (benign/core/fingerprint.py): a param, so that
    editing a module reruns exactly the jobs that import it. ``modules``: modules the script
    picks by name at run time."""
    return fingerprint(SCRIPTS / script, *modules)


def train_code(job):
    """A synthetic training job's fingerprint: its script and the modules of its runs' models."""
    models = sorted({registry.MODELS[run["model"]].module for run in SYN_JOBS[job]})
    return code("train_synthetic.py", *models)


wildcard_constraints:
    job="|".join(SYN_JOBS),
    model="|".join(MODELS),
    cell="|".join(REAL_CELLS) or "none",
    dataset="|".join(plan.real_datasets(config)) or "none",
    part="[0-9]+",
    max_margin_model="|".join(MM_RUNS) or "none",
    rjob=f"{FITS.get('model', 'none')}_({REFINE_SETTING}|{CONVERGENCE_SETTING})_[0-9]+",
    parts="[0-9]+",


def dataset_entry(name):
    """A data set's config entry as the library takes it (with its name; without its ``note``,
    which only the tables print, so editing it reruns no training)."""
    entry = {k: v for k, v in config["real"]["datasets"][name].items() if k != "note"}
    return {**entry, "name": name}


def backbone_spec(dataset):
    name = config["real"]["datasets"][dataset]["backbone"]
    return {**config["real"]["backbones"][name], "name": name}


def features_code(dataset):
    """features_real's fingerprint: its script and the module that loads the data set's
    backbone, which the script picks by name at run time (benign.real.registry.BACKBONE_KINDS).
    """
    kind = real_registry.BACKBONE_KINDS[backbone_spec(dataset)["kind"]]
    return code("features_real.py", kind.module)


def jobs_of(model):
    return [job for job, runs in SYN_JOBS.items() if runs[0]["model"] == model]


def coarse_jobs():
    """The jobs holding runs of the refined sweep (read by the refinement's planner)."""
    return [
        job
        for job in jobs_of(FITS["model"])
        if any(REFINE["sweep"] in run["sweeps"] for run in SYN_JOBS[job])
    ]


def refinement_jobs(model):
    """{job id: runs} of the refinement, once the checkpoint plan_refinement has planned them
    ({} for a model whose atlas is not refined)."""
    if not REFINE or model != FITS["model"]:
        return {}
    with open(checkpoints.plan_refinement.get().output[0]) as plan:
        return json.load(plan)


def job_tables(model, table):
    """A model's job tables of one kind: its planned jobs', and its refinement's."""
    return expand(paths.SYNTHETIC_JOB, job=jobs_of(model), table=table) + expand(
        paths.REFINEMENT_JOB, rjob=list(refinement_jobs(model)), table=table
    )


def refinement_job(wc):
    """A refinement job's need, from the runs its plan holds."""
    return rs.synthetic_job_need(
        refinement_jobs(FITS["model"])[wc.rjob], CLUSTER.device
    )


def built(art, model=None):
    """Whether the config asks for an artifact, a per-model one of ``model``
    (benign.artifacts.entry.CONDITIONS)."""
    models = MODELS if model is None else [model] if model in MODELS else []
    conditions = {
        "always": True,
        "delayed": "token" in MODELS and bool(SYN["token"].get("delayed")),
        "heatmap": any("heatmap" in SYN[m].get("sweeps", {}) for m in models),
        "boundary_fits": bool(FITS),
        "delay_scan": HAS_DELAY_SCAN,
        "one_step": HAS_ONE_STEP,
        "w_control": HAS_W_CONTROL,
        "predictor_check": HAS_PREDICTOR_CHECK,
        "max_margin": bool(MM_RUNS),
        "real": bool(REAL_CELLS),
    }
    return bool(models) and conditions[art.when]


def drawn():
    """(artifact, model) for every artifact of the table that the config asks for: a per-model
    one once for each configured model it is built for, any other with model None."""
    return [
        (art, model)
        for art in artifacts.ARTIFACTS.values()
        for model in (MODELS if art.models else [None])
        if built(art, model)
    ]


def all_outputs():
    """Every artifact of the table that the config asks for, each in both of its formats."""
    return [f for art, model in drawn() for f in art.files(model)] + [paths.SUMMARY]


def artifact_input(spec, model=None):
    """The files an artifact input names (benign.artifacts.entry.InputKind), as the outputs of
    the job that makes its kind (a per-model artifact gives its ``model``)."""
    if isinstance(spec, artifact_entry.File):
        return spec.path
    name, _, of = spec.partition("@")
    if name == "fits" and not (FITS and (of != "model" or model == FITS["model"])):
        return []  # no atlas table: the config fits no boundary, or not this model's
    kind = artifacts.KINDS[name]
    files = getattr(rules, kind.rule).output
    if isinstance(kind.output, int):
        files = files[kind.output]
    elif kind.output is not None:
        files = getattr(files, kind.output)
    if kind.per_model:
        models = {"all": MODELS, "fits": [FITS.get("model")], "model": [model]}
        return [files.format(model=m) for m in models.get(of, [of])]
    if kind.expand:
        return expand(files, **{kind.expand: SPANNED[kind.expand]})
    return files


# a param's "@name": a value the workflow computes ("@model": a per-model artifact's model)
CONSTANTS = {
    "atlas_settings": ATLAS_SETTINGS,
    "convergence": CONVERGENCE
    and {"setting": CONVERGENCE_SETTING, "factor": CONVERGENCE["factor"]},
    "one_step": ONE_STEP,
    "w_control": W_CONTROL,
    "predictor_check": PREDICTOR_CHECK,
    "delay_scan": DELAY_SCAN,
    # per data set, a sentence for the real tables' header
    "real_notes": {
        d: config["real"]["datasets"][d].get("note")
        for d in (plan.real_datasets(config) if REAL_CELLS else [])
    },
}
try:  # every entry of the table against its function's signature, before any job runs
    artifacts.check(constants=set(CONSTANTS))
except ValueError as err:
    raise WorkflowError(str(err)) from None


def artifact_params(params, model=None):
    """The values of an artifact's params (benign.artifacts.entry.param_value)."""
    return {
        name: artifact_entry.param_value(config, spec, {**CONSTANTS, "model": model})
        for name, spec in params.items()
    }
