"""Every generated figure and table rule (benign/artifacts/): load the half that holds the entry,
read the inputs by their kinds, pass those its view reads through the view, and call its function
with exactly the arguments the entry gives it (the workflow has checked them at parse time)."""

from importlib import import_module

from benign.artifacts.entry import File
from benign.core.io import log_to


def read(spec, paths):
    """An input's value: a repository file's path, None where no file, else the files read by kind."""
    if isinstance(spec, File):
        return str(paths)
    if not isinstance(paths, str):
        paths = list(paths)
        if not paths:
            return None
    return spec.kind.read(paths)


log_to(snakemake.log[0])
half = import_module(snakemake.params.half)  # the rule's fingerprint names it
artifact = half.ENTRIES[snakemake.params.artifact]
values = {name: read(spec, snakemake.input[name]) for name, spec in artifact.inputs.items()}
if artifact.view:
    view = artifact.view
    given = view.function(**{name: values.pop(name) for name in view.reads}, **snakemake.params.view)
    values |= {name: given[name] for name in view.gives}
stem = snakemake.output[0].removesuffix(artifact.extensions[0])
artifact.function(**values, **snakemake.params.args, stem=stem)
