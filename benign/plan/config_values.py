"""What the config's values mean, read the one way both validation and planning read them: a
grid's values, whether two axis values are the same, a sweep's exclusions and its length, the
models configured and the fields every run of a model starts from. Nothing here plans a job
(benign.plan.jobs) or checks across keys (benign.plan.validate). Torch-free.
"""

from __future__ import annotations

import math

from benign.plan import ConfigError
from benign.synthetic import registry, spec


def grid(spec, key: str) -> list[float]:
    """A grid's values, given as a list or as {start, stop, step} (stop included). Its types and
    bounds are the schema's ($defs/grid, $defs/rates); a range must not run backwards."""
    if not isinstance(spec, dict):
        return list(spec)
    start, stop, step = spec["start"], spec["stop"], spec["step"]
    if stop < start:
        raise ConfigError(f"{key}: stop ({stop!r}) is below start ({start!r})")
    count = int(math.floor((stop - start) / step + 1e-9)) + 1
    values = [round(start + i * step, 10) for i in range(count)]
    if all(isinstance(v, int) for v in (start, step)):
        values = [int(v) for v in values]
    return values


def same_value(a, b) -> bool:
    """Whether two axis values are the same number (or the same value)."""
    try:
        return math.isclose(float(a), float(b), rel_tol=1e-9)
    except (TypeError, ValueError):
        return a == b


def excluded(run: dict, exclude: list[dict]) -> bool:
    """Whether a run's axis values match one of a sweep's ``exclude`` combinations."""
    return any(all(same_value(run[key], value) for key, value in combo.items()) for combo in exclude)


def sweep_length(sweep: dict, default_steps: int) -> dict:
    """How long a sweep's runs train and what they log, the one place its defaults are read: its
    own ``steps`` (else ``synthetic.defaults.steps``), ``log_every`` and ``log_points`` (else 0:
    the first and last step only)."""
    return {"steps": sweep.get("steps", default_steps), "log_every": sweep.get("log_every", 0),
            "log_points": sweep.get("log_points", 0)}  # fmt: skip


def configured_models(cfg: dict) -> list[str]:
    """The registered models the config has a ``synthetic.<model>`` block for, in registry order."""
    return [name for name in registry.MODELS if name in cfg["synthetic"]]


def base_run(cfg: dict, model: str) -> dict:
    """The fields every run of ``model`` starts from: ``synthetic.defaults`` and the model's own keys."""
    syn = cfg["synthetic"]
    base = {k: syn["defaults"][k] for k in spec.DEFAULT_KEYS}
    base["model"] = model
    base.update({k: syn[model].get(k) for k in spec.MODEL_KEYS})  # the models' own run keys (benign.synthetic.registry)
    return base
