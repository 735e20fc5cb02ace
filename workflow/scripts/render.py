"""Every generated figure and table rule (benign/config/artifacts.py): read the inputs by kind,
pass them through the artifact's view, and call its function."""

import inspect
from importlib import import_module

import pandas as pd

from benign.config.artifacts import ARTIFACTS
from benign.core import schema
from benign.core.io import log_to
from benign.real import schema as real_schema
from benign.synthetic import schema as syn_schema

READERS = {  # an input kind -> how it is read (benign.config.artifacts.INPUT_KINDS)
    "runs": lambda paths: schema.read_parquet(paths, syn_schema.RUNS),
    "curves": lambda paths: schema.read_parquet(paths, syn_schema.CURVES),
    "attention": lambda paths: schema.read_parquet(paths, syn_schema.ATTENTION),
    "alignment": lambda paths: schema.read_parquet(paths, syn_schema.ALIGNMENT),
    "real_runs": lambda paths: schema.read_parquet(paths, real_schema.REAL_RUNS),
    "real_attention": lambda paths: schema.read_parquet(paths, real_schema.REAL_ATTENTION),
    "real_curves": lambda paths: schema.read_parquet(paths, real_schema.REAL_CURVES),
    "fits": pd.read_csv,
    "points": pd.read_parquet,
}


def resolve(name: str):
    module, _, function = name.partition(":")
    return getattr(import_module(module), function)


def accepted(function, values: dict) -> dict:
    """The values ``function`` takes by name."""
    return {k: v for k, v in values.items() if k in inspect.signature(function).parameters}


log_to(snakemake.log[0])
artifact = ARTIFACTS[snakemake.params.artifact]
values = {}
for name, kind in artifact.inputs.items():
    paths = snakemake.input[name]
    values[name] = READERS[kind.partition("@")[0]](paths if isinstance(paths, str) else list(paths))
if artifact.view:
    view = resolve(artifact.view)
    values |= view(**accepted(view, values), **snakemake.params.view)
function = resolve(artifact.function)
first = snakemake.output[0]
function(**accepted(function, values), **snakemake.params.args, stem=first.removesuffix(artifact.extensions[0]))
