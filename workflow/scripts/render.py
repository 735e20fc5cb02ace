"""Every generated figure and table rule (benign/artifacts/): its entry's recipe (what
``Artifact.recipe`` gives) names the function, each input's kind and the view; read the inputs by
their kinds, pass those the view reads through it, and call the function with exactly the
arguments the entry gives it (the workflow has checked them at parse time). The entries' table
is never loaded here: an edit to another entry leaves this job alone."""

from importlib import import_module

from benign.core.io import log_to


def named(name):
    """The module-level function ``module:function``."""
    module, _, function = name.partition(":")
    return getattr(import_module(module), function)


def read(kind, paths):
    """An input's value: a repository file's path (no kind), None where no file, else the files read by kind."""
    if kind is None:
        return str(paths)
    if not isinstance(paths, str):
        paths = list(paths)
        if not paths:
            return None
    return kind.read(paths)


log_to(snakemake.log[0])
recipe = snakemake.params.recipe
kinds = import_module(recipe["kinds"]).KINDS  # the rule's fingerprint names the module
values = {name: read(kinds[kind] if kind else None, snakemake.input[name]) for name, kind in recipe["inputs"].items()}
if view := recipe["view"]:
    given = named(view["function"])(**{name: values.pop(name) for name in view["reads"]}, **snakemake.params.view)
    values |= {name: given[name] for name in view["gives"]}
stem = snakemake.output[0].removesuffix(snakemake.params.extension)
named(recipe["function"])(**values, **snakemake.params.args, stem=stem)
