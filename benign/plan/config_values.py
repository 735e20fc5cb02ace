"""What the config's values mean, read once: :func:`read` turns a schema-checked config into a
:class:`Config` (every grid's values, each sweep's axes, length and logging, each model's base
run, the real-data grid and its recorded epochs, the cluster's ceilings), which validation
(benign.plan.validate) and planning (benign.plan.jobs) then read. Nothing here plans a job or
checks across keys; what is refused here is only a value that cannot be read (a range that
runs backwards, recorded epochs that do not rise, an exclusion that names no value of its sweep's
axes, a cluster block that is not one). Torch-free.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from itertools import product

from benign.plan import ConfigError
from benign.plan.resources import DEVICE_KINDS, Cluster
from benign.real.records import record_epochs
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


@dataclass(frozen=True)
class Sweep:
    """``synthetic.<model>.sweeps.<name>``, read: its axes' values, the combinations of them it
    trains (``cells``: all but those its ``exclude`` lists), its fixed values as written, and its
    length and logging (:func:`sweep_length`)."""

    model: str
    name: str
    axes: dict[str, list]
    cells: list[dict]
    fixed: dict
    snr_range: list | None
    seeds: list[int]
    steps: int
    log_every: int
    log_points: int
    batches_per_job: int | None

    @property
    def where(self) -> str:
        return f"config key synthetic.{self.model}.sweeps.{self.name}"


@dataclass(frozen=True)
class Model:
    """``synthetic.<model>`` of a registered model: its block as written, the fields every run of
    it starts from (``synthetic.defaults`` and its own run keys) and its sweeps, read."""

    name: str
    block: dict
    base: dict
    sweeps: dict[str, Sweep]


@dataclass(frozen=True)
class Real:
    """``real``, read: the grid's n, eta and seeds, the eta sweep's cell (n, seed, etas) or None,
    the data sets it uses (``use``) and the catalogue they are named in, the backbones, the
    protocol and its recorded epochs."""

    ns: list
    etas: list
    seeds: list
    eta_sweep: dict | None
    use: list[str]
    datasets: dict[str, dict]
    backbones: dict
    protocol: dict
    records: list[int]


@dataclass(frozen=True)
class Config:
    """A checked config read once: what validation and planning read, and the config itself
    (``raw``), which the rules' params quote."""

    raw: dict
    cluster: Cluster
    defaults: dict
    models: dict[str, Model]
    fits: dict
    real: Real | None
    max_margin: dict | None


def read(cfg: dict) -> Config:
    """``cfg`` (its schema's defaults filled in, switched-off sweeps dropped) as a :class:`Config`;
    a :class:`ConfigError` naming the key where a value cannot be read."""
    syn = cfg["synthetic"]
    models = {name: _model(syn, name) for name in registry.MODELS if name in syn}
    real = _real(cfg.get("real"))
    return Config(raw=cfg, cluster=read_cluster(cfg), defaults=syn["defaults"], models=models,
                  fits=syn.get("boundary_fits") or {}, real=real, max_margin=cfg.get("max_margin") or None)  # fmt: skip


def _model(syn: dict, name: str) -> Model:
    block = syn[name]
    base = {k: syn["defaults"][k] for k in spec.DEFAULT_KEYS}
    base["model"] = name
    base.update({k: block.get(k) for k in spec.MODEL_KEYS})  # the models' own run keys (benign.synthetic.registry)
    sweeps = {sweep: read_sweep(name, sweep, raw, base["steps"]) for sweep, raw in block.get("sweeps", {}).items()}
    return Model(name, block, base, sweeps)


def read_sweep(model: str, name: str, raw: dict, default_steps: int) -> Sweep:
    """``synthetic.<model>.sweeps.<name>`` as a :class:`Sweep`, its runs lasting ``default_steps`` unless it says."""
    where = f"config key synthetic.{model}.sweeps.{name}"
    axes = {axis: grid(values, f"{where}.axes.{axis}") for axis, values in raw["axes"].items()}
    exclude = raw.get("exclude", [])
    for k, combo in enumerate(exclude):  # an exclusion reads only as values of the sweep's axes
        for key, value in combo.items():
            if key not in axes:
                raise ConfigError(f"{where}.exclude[{k}].{key} = {value!r}: {key} is not an axis of this sweep")
            if not any(same_value(value, v) for v in axes[key]):
                raise ConfigError(f"{where}.exclude[{k}].{key} = {value!r}: not a value of the axis ({axes[key]})")
    cells = [cell for values in product(*axes.values()) if not excluded(cell := dict(zip(axes, values)), exclude)]
    return Sweep(model, name, axes, cells, raw.get("fixed", {}), raw.get("snr_range"),
                 raw["seeds"], **sweep_length(raw, default_steps), batches_per_job=raw.get("batches_per_job"))  # fmt: skip


def _real(real: dict | None) -> Real | None:
    if not real:
        return None
    grid_cfg, sweep, protocol = real["grid"], real.get("eta_sweep"), real["protocol"]
    try:
        records = record_epochs(protocol["finetune_epochs"], protocol["record_epochs"])
    except ValueError as err:
        raise ConfigError(str(err)) from None
    return Real(
        ns=grid(grid_cfg["n"], "real.grid.n"),
        etas=grid(grid_cfg["eta"], "real.grid.eta"),
        seeds=grid_cfg["seeds"],
        eta_sweep={"n": sweep["n"], "seed": sweep["seed"], "etas": grid(sweep["eta"], "real.eta_sweep.eta")}
        if sweep
        else None,
        use=list(real.get("use", [])),
        datasets=real.get("datasets", {}),
        backbones=real["backbones"],
        protocol=protocol,
        records=records,
    )


def read_cluster(cfg: dict) -> Cluster:
    """The config's ``cluster`` block, checked. Numbers may come as strings: a profile's
    ``config:`` mapping reaches the workflow that way."""
    block = cfg.get("cluster") or {}
    if not isinstance(block, dict):
        raise ConfigError(
            f"config key cluster = {block!r}: must be a mapping ({', '.join(f.name for f in fields(Cluster))})"
        )
    known = [f.name for f in fields(Cluster)]
    unknown = sorted(set(block) - set(known))
    if unknown:
        raise ConfigError(f"config key cluster.{unknown[0]} is not known; known: {', '.join(known)}")
    device = str(block.get("device") or "cpu")
    if device not in DEVICE_KINDS:
        raise ConfigError(f"config key cluster.device = {device!r}: must be one of {', '.join(DEVICE_KINDS)}")
    ceilings = {}
    for key in ("max_mem_mb", "max_runtime_min"):
        value = block.get(key)
        if value is None or value == "null":
            ceilings[key] = None
            continue
        try:
            number = int(float(value))
        except (TypeError, ValueError):
            raise ConfigError(f"config key cluster.{key} = {value!r}: must be a positive number or null") from None
        if number <= 0:
            raise ConfigError(f"config key cluster.{key} = {value!r}: must be a positive number or null")
        ceilings[key] = number
    group = block.get("group")
    return Cluster(device, **ceilings, group=None if group in (None, "null") else str(group))
