"""The experiment configuration, in reading order (torch-free: the workflow reads it at parse time):

1. ``validate.py``: the one validation layer (the JSON schema, completed from the registry and
   the run spec, and the checks a schema cannot express).
2. ``plan.py``: the jobs a valid configuration asks for; ``resources.py``: what each needs.
3. ``load.py``: both, as the workflow calls them.
4. ``artifacts.py``: the table of every figure and table, from which the render rules come.
"""


class ConfigError(ValueError):
    """A configuration value that cannot be used; the message names the key and the value."""
