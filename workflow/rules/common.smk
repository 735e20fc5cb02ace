"""Imports, config validation and input functions. Torch-free: every cluster job re-parses this."""

import json
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

sys.path.insert(
    0, str(Path(workflow.basedir))
)  # the library, also when not pip-installed
from benign import registry
from benign.config import SWEEP_SEP, ConfigError, plan
from benign.config import resources as rs
from benign.config import validate as cv
from benign.fingerprint import fingerprint

SCHEMA = Path(workflow.basedir) / "workflow/schemas/config.schema.yaml"
try:
    cv.validate_config(config, SCHEMA)  # readable messages, then the schema's defaults
    CLUSTER = rs.cluster_settings(
        config
    )  # device kind and the site's ceilings (a profile sets them)
    SYN_JOBS = plan.synthetic_jobs(config)  # split to fit the ceilings
    REAL_CELLS = plan.real_cells(config)
    REAL_NEEDS = plan.real_needs(config, REAL_CELLS)
    # a data set's feature cache, in parts that fit the ceilings
    FEATURE_PARTS = plan.feature_parts(config, REAL_CELLS)
    MM_RUNS = plan.max_margin_runs(config)  # the attention-SVM check's runs, per model
    cv.check_projection(config)
    cv.check_boundary_fits(config)
    for message in cv.warnings(config):
        logger.warning(f"config warning: {message}")
except ConfigError as err:
    raise WorkflowError(f"invalid configuration:\n{err}") from None

SYN = config["synthetic"]
FITS = SYN.get("boundary_fits", {})
# The atlas's refinement around its transitions (docs/regimes.md#refinement), if configured.
REFINE = FITS.get("refine")
REFINE_SETTING = f"{REFINE['sweep']}_refine" if REFINE else None
# The settings whose runs the atlas's tables and figures read, each run once.
ATLAS_SETTINGS = [*FITS.get("sweeps", []), *([REFINE_SETTING] if REFINE else [])]
# The token sweep read by the delay-scan table (docs/regimes.md#delay-scan), if configured.
DELAY_SCAN = "delay_scan"
HAS_DELAY_SCAN = DELAY_SCAN in SYN.get("token", {}).get("sweeps", {})
MODELS = plan.configured_models(config)
SYN_TABLES = ["runs", "curves", "attention"]
SCRIPTS = Path(workflow.basedir) / "workflow/scripts"


GPU = int(CLUSTER.device == "cuda")  # the training rules' `gpu` resource


def syn_need(field):
    """A synthetic training job's request (benign/config/resources.py), larger on each retry."""
    return lambda wc, attempt: getattr(
        rs.for_attempt(
            rs.synthetic_job_need(SYN_JOBS[wc.job], CLUSTER.device), attempt, CLUSTER
        ),
        field,
    )


def mm_need(field):
    """An attention-SVM job's request: its runs are token-model batches, larger on each retry."""
    return lambda wc, attempt: getattr(
        rs.for_attempt(
            rs.synthetic_job_need(MM_RUNS[wc.svm_model], CLUSTER.device),
            attempt,
            CLUSTER,
        ),
        field,
    )


def real_need(rule, key, field):
    """A real-data job's request: ``REAL_NEEDS[rule][key(wildcards)]``, larger on each retry."""
    return lambda wc, attempt: getattr(
        rs.for_attempt(REAL_NEEDS[rule][key(wc)], attempt, CLUSTER), field
    )


def feature_files(dataset):
    """The parts of a data set's feature cache (rule features_real)."""
    parts = FEATURE_PARTS[dataset]
    return [
        f"resources/features/{dataset}/part{k}-of-{parts}.safetensors"
        for k in range(parts)
    ]


def code(script, *modules):
    """The fingerprint of what a rule's script runs (benign/fingerprint.py): a param, so that
    editing a module reruns exactly the jobs that import it. ``modules``: modules the script
    picks by name at run time."""
    return fingerprint(SCRIPTS / script, *modules)


def train_code(job):
    """A synthetic training job's fingerprint: its script and the modules of its runs' models."""
    models = sorted({registry.MODELS[run["model"]].module for run in SYN_JOBS[job]})
    return code("train_synthetic.py", *models)


def artifacts(kind):
    """{artifact name: model} for a per-model figure kind: <prefix>softmax_dynamics, ..."""
    return {
        registry.MODELS[m].artifact_prefix + kind: m
        for m in MODELS
        if kind != "loss_heatmap" or "heatmap" in SYN[m].get("sweeps", {})
    }


wildcard_constraints:
    job="|".join(SYN_JOBS),
    model="|".join(MODELS),
    cell="|".join(REAL_CELLS) or "none",
    dataset="|".join(plan.real_datasets(config)) or "none",
    etas="0.1|0_0.2",
    part="[0-9]+",
    svm_model="|".join(MM_RUNS) or "none",
    rjob=f"{FITS.get('model', 'none')}_{REFINE_SETTING}_[0-9]+",
    parts="[0-9]+",
    softmax_dynamics="|".join(artifacts("softmax_dynamics")),
    loss_heatmap="|".join(artifacts("loss_heatmap")) or "none",


def model_of(artifact):
    """The model a per-model figure shows (its name starts with the model's artifact prefix)."""
    for kind in ("softmax_dynamics", "loss_heatmap"):
        if artifact in artifacts(kind):
            return artifacts(kind)[artifact]
    raise ValueError(f"no model draws {artifact!r}")


def dataset_entry(name):
    """A data set's config entry as the library takes it (with its name; without its ``note``,
    which only the tables print, so editing it reruns no training)."""
    entry = {k: v for k, v in config["real"]["datasets"][name].items() if k != "note"}
    return {**entry, "name": name}


def backbone_spec(dataset):
    name = config["real"]["datasets"][dataset]["backbone"]
    return {**config["real"]["backbones"][name], "name": name}


def jobs_of(model):
    return [job for job, runs in SYN_JOBS.items() if runs[0]["model"] == model]


def coarse_jobs():
    """The jobs holding runs of the refined sweep (read by the refinement's planner)."""
    return [
        job
        for job in jobs_of(FITS["model"])
        if any(
            REFINE["sweep"] in run["setting"].split(SWEEP_SEP) for run in SYN_JOBS[job]
        )
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
    return expand(
        "results/synthetic/jobs/{job}/{table}.parquet", job=jobs_of(model), table=table
    ) + expand(
        "results/synthetic/refine/{rjob}/{table}.parquet",
        rjob=list(refinement_jobs(model)),
        table=table,
    )


def refine_need(field):
    """A refinement job's request, from the runs its plan holds, larger on each retry."""
    return lambda wc, attempt: getattr(
        rs.for_attempt(
            rs.synthetic_job_need(
                refinement_jobs(FITS["model"])[wc.rjob], CLUSTER.device
            ),
            attempt,
            CLUSTER,
        ),
        field,
    )


def figure(name):
    return multiext(f"results/figures/{name}", ".png", ".pdf")


def all_outputs():
    names = [
        "token_projection",
        *artifacts("softmax_dynamics"),
        *artifacts("loss_heatmap"),
    ]
    if "token" in MODELS and SYN["token"].get("delayed"):
        names.append("delayed_generalization")
    out = [f"results/figures/{name}.{ext}" for name in names for ext in ("png", "pdf")]
    out += [f"results/tables/synthetic_regimes.{ext}" for ext in ("csv", "md")]
    if FITS:
        out += [
            f"results/tables/{name}.{ext}"
            for name in ("regime_boundaries", "regime_model", "generalization_times")
            for ext in ("csv", "md")
        ]
        out += [
            f"results/figures/{name}.{ext}"
            for name in ("regime_map", "boundary_scaling", "generalization_delay")
            for ext in ("png", "pdf")
        ]
    if MM_RUNS:
        out += [f"results/figures/max_margin_alignment.{ext}" for ext in ("png", "pdf")]
        out += [f"results/tables/max_margin.{ext}" for ext in ("csv", "md")]
    if HAS_DELAY_SCAN:
        out += [f"results/tables/delay_scan.{ext}" for ext in ("csv", "md")]
    if REAL_CELLS:
        out += [
            f"results/figures/{name}.{ext}"
            for name in ("real_eta_heatmap", "real_attention_dynamics")
            for ext in ("png", "pdf")
        ]
        out += [
            f"results/tables/real_eta{etas}.{ext}"
            for etas in ("0.1", "0_0.2")
            for ext in ("csv", "md")
        ]
    return out
