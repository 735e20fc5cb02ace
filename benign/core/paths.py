"""Where the workflow's files live: every path template, once. The rules, the scripts, the
tests and the benchmarks read them here. Paths are relative to the workflow's working
directory; ``{name}`` is a Snakemake wildcard (:func:`fill` sets some and keeps the others)."""

from __future__ import annotations

import re

TABLES = ("runs", "curves", "attention")  # the tables a training job writes

# the synthetic half
SYNTHETIC_JOB = "results/synthetic/jobs/{job}/{table}.parquet"  # a planned training job's tables
REFINEMENT_PLAN = "results/synthetic/refine/plan.json"  # the refinement's jobs (a checkpoint)
REFINEMENT_JOB = "results/synthetic/refine/{rjob}/{table}.parquet"
SYNTHETIC = "results/synthetic/{model}/{table}.parquet"  # a model's jobs gathered
SWEEP = "results/synthetic/sweeps/{model}/{sweep}/{table}.parquet"  # one sweep's jobs gathered (and its refinement's)
SWEEP_TABLES = ("runs", "curves")  # what the sweeps' readers read
TOKEN_PROJECTION = "results/synthetic/token_projection.parquet"  # Figure 1's points
MAX_MARGIN = "results/max_margin/{max_margin_model}.parquet"
LIMIT = "results/synthetic/limit/{table}.parquet"  # the atlas's t = infinity labels ("limit"), its selection's kinds
LIMIT_TABLES = ("limit", "selection")
# the real half
DATASET = "resources/datasets/{dataset}"
FEATURES = "resources/features/{dataset}/part{part}-of-{parts}.safetensors"
HEADS = "results/real/heads/{dataset}.safetensors"
REAL_JOB = "results/real/jobs/{cell}/{table}.parquet"
REAL = "results/real/{table}.parquet"
# what a reader sees
ARTIFACT = "results/{kind}s/{stem}{ext}"  # a figure (.png, .pdf) or a table (.csv, .md)
SUMMARY = "results/summary.md"
# a training job's state folder (benign.core.job_state): "{job}" or "real/{cell}"
CHECKPOINTS = "results/.checkpoints"


def fill(template: str, **values) -> str:
    """``template`` with the wildcards named in ``values`` set, the others kept."""
    return re.sub(r"\{(\w+)\}", lambda m: str(values[m[1]]) if m[1] in values else m[0], template)


def tables(template: str, names=TABLES, **values) -> dict[str, str]:
    """{table: path} of a template with ``{table}``: a rule's named outputs or inputs."""
    return {name: fill(template, table=name, **values) for name in names}
