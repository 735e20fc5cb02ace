"""Imports, config validation and input functions. Torch-free: every cluster job re-parses this."""

import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

sys.path.insert(
    0, str(Path(workflow.basedir))
)  # the library, also when not pip-installed
from benign import config as bc

SCHEMA = Path(workflow.basedir) / "workflow/schemas/config.schema.yaml"
try:
    bc.validate_config(config, SCHEMA)  # readable messages: key, value, what is allowed
    validate(config, SCHEMA)  # fills in the schema's defaults
    SYN_JOBS = bc.synthetic_jobs(config)
    REAL_CELLS = bc.real_cells(config)
    bc.check_projection(config)
    for message in bc.warnings(config):
        logger.warning(f"config warning: {message}")
except bc.ConfigError as err:
    raise WorkflowError(f"invalid configuration:\n{err}") from None

SYN = config["synthetic"]
SYNTHETIC_CODE = bc.fingerprint(*bc.SYNTHETIC_SOURCES)
PROJECTION_CODE = bc.fingerprint(
    "synthetic.py", "label_noise.py", "token_projection.py"
)
FIGURES_CODE = bc.fingerprint("figures.py", "tables.py", "theory.py", "schema.py")
REAL_CODE = bc.fingerprint(*bc.REAL_SOURCES)
FEATURES_CODE = bc.fingerprint(*bc.FEATURE_SOURCES)
FETCH_CODE = bc.fingerprint(*bc.FETCH_SOURCES)
MODELS = ["token", "encoder"]
SYN_TABLES = ["runs", "curves", "attention"]


wildcard_constraints:
    job="|".join(SYN_JOBS),
    model="|".join(MODELS),
    cell="|".join(REAL_CELLS) or "none",
    dataset="|".join(bc.real_datasets(config)) or "none",
    etas="0.1|0_0.2",
    softmax_dynamics="(encoder_)?softmax_dynamics",
    loss_heatmap="(encoder_)?loss_heatmap",


def model_of(artifact):
    """Encoder artifacts are named encoder_*; the rest show the token-selection model."""
    return "encoder" if artifact.startswith("encoder_") else "token"


def dataset_entry(name):
    """A data set's config entry as the library takes it (with its name)."""
    return {**config["real"]["datasets"][name], "name": name}


def backbone_spec(dataset):
    name = config["real"]["datasets"][dataset]["backbone"]
    return {**config["real"]["backbones"][name], "name": name}


def jobs_of(model):
    return [job for job in SYN_JOBS if job.startswith(f"{model}_")]


def figure(name):
    return multiext(f"results/figures/{name}", ".png", ".pdf")


def all_outputs():
    names = [
        "token_projection",
        "softmax_dynamics",
        "loss_heatmap",
        "encoder_softmax_dynamics",
        "encoder_loss_heatmap",
        "delayed_generalization",
    ]
    out = [f"results/figures/{name}.{ext}" for name in names for ext in ("png", "pdf")]
    out += [f"results/tables/synthetic_regimes.{ext}" for ext in ("csv", "md")]
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
