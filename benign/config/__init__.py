"""The experiment configuration: ``validate`` (the one validation layer) and ``plan`` (the jobs a
valid configuration asks for). Torch-free."""


class ConfigError(ValueError):
    """A configuration value that cannot be used; the message names the key and the value."""


SWEEP_SEP = "+"  # a run shared by several sweeps is trained once; its setting names them all
