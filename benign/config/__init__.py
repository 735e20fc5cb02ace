"""The experiment configuration, in reading order (torch-free: the workflow reads it at parse time):

1. ``schema.py``: the JSON schema, each key's one owner (type, bounds, default, description),
   generated from ``schema_source.yaml``, the run spec and the registry into
   workflow/schemas/config.schema.yaml; ``validate.py``: the one validation layer (that schema,
   and the checks across keys a schema cannot express).
2. ``plan.py``: the jobs a valid configuration asks for; ``resources.py`` and
   ``real_resources.py``: what each needs, the synthetic and the real-data jobs.
3. ``load.py``: both, as the workflow calls them.
4. ``artifacts.py``: the table of every figure and table, from which the render rules come.
"""


class ConfigError(ValueError):
    """A configuration value that cannot be used; the message names the key and the value."""
