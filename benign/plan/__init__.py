"""Planning: the experiment configuration, checked and turned into jobs with their needs, in
reading order (torch-free: the workflow reads it at parse time):

1. ``schema.py``: the JSON schema, each key's one owner (type, bounds, default, description),
   generated from ``schema_source.yaml``, the run spec and the registry into
   workflow/schemas/config.schema.yaml; ``config_values.py``: the config read once into typed
   values (``Config``, its cluster's ceilings a ``resources.Cluster``), which validation and
   planning read; ``validate.py``: the one
   validation layer (that schema, and the checks across keys a schema cannot express).
2. ``jobs.py``: the jobs a valid configuration asks for; ``resources.py`` and
   ``real_resources.py``: what each needs, the synthetic jobs from their models' cost
   functions (benign/synthetic/costs.py), the real-data jobs (split to fit the ceilings there).
3. ``load.py``: schema, reading, checks and planning, in that order, as the workflow calls them.
4. ``refinement_job.py``: the refinement checkpoint's job; ``forecast.py``: what a run will cost.

Above ``analysis`` in the layers, beside ``tables`` and ``figures``: it imports ``analysis``
(the refinement's windows), the halves and ``core``; ``artifacts``, ``workplan``, ``cli``, the
workflow and the tests import it.
"""


class ConfigError(ValueError):
    """A configuration value that cannot be used; the message names the key and the value."""
