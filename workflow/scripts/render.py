"""Every generated figure and table rule (benign/config/artifacts.py): read the inputs by kind,
pass those its view reads through the view, and call its function with exactly the arguments
the entry gives it (the workflow has checked them against the signatures at parse time)."""

from importlib import import_module

import pandas as pd

from benign.config.artifacts import ARTIFACTS, File
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


def read(spec, paths):
    """An input's value: a repository file's path, None where no file, else the files read by kind."""
    if isinstance(spec, File):
        return str(paths)
    if not isinstance(paths, str):
        paths = list(paths)
        if not paths:
            return None
    return READERS[spec.partition("@")[0]](paths)


log_to(snakemake.log[0])
artifact = ARTIFACTS[snakemake.params.artifact]
values = {name: read(spec, snakemake.input[name]) for name, spec in artifact.inputs.items()}
if artifact.view:
    view = artifact.view
    given = resolve(view.function)(**{name: values.pop(name) for name in view.reads}, **snakemake.params.view)
    values |= {name: given[name] for name in view.gives}
stem = snakemake.output[0].removesuffix(artifact.extensions[0])
resolve(artifact.function)(**values, **snakemake.params.args, stem=stem)
