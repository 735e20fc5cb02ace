"""The configuration's one validation layer: the JSON schema, completed from the registry, and
the checks a schema cannot express. Every message names the key, the value and what is allowed.

Torch-free on purpose: the workflow imports this at parse time (every cluster job re-parses
the Snakefile, so the top level must stay cheap). No training job imports it, so rewording a
message here reruns nothing.
"""

from __future__ import annotations

import copy
import math
import numbers
from pathlib import Path

import jsonschema
import yaml

from benign.config import ConfigError
from benign.real import registry as real_registry
from benign.synthetic import registry, spec

NAMED_SETTINGS = ("benign", "harmful", "not_overfitting")


def schema(schema_path: str | Path) -> dict:
    """The schema file completed from benign.synthetic.registry: a ``synthetic.<model>`` block for every
    registered model (the generic block plus the model's own run keys), and the source and
    backbone kinds."""
    out = yaml.safe_load(Path(schema_path).read_text())
    synthetic = out["properties"]["synthetic"]["properties"]
    for name, entry in registry.MODELS.items():
        block = copy.deepcopy(out["$defs"]["model"])
        block["properties"].update(entry.run_keys)
        block["required"] = block["required"] + list(entry.run_keys)
        block["description"] = f"the {entry.label} ({name})"
        synthetic[name] = block
    _from_spec(out)
    real = out["properties"]["real"]["properties"]
    real["datasets"]["additionalProperties"]["properties"]["source"]["properties"]["kind"]["enum"] = list(
        real_registry.SOURCE_KINDS
    )
    real["backbones"]["additionalProperties"]["properties"]["kind"]["enum"] = list(real_registry.BACKBONE_KINDS)
    return out


def _from_spec(out: dict) -> None:
    """The run parameters' entries of the schema, from benign.synthetic.spec: the keys of
    ``synthetic.defaults``, and a sweep's axes and fixed values."""
    entry = {f.name: {**f.metadata["schema"], "description": f.metadata["help"]} for f in spec.FIELDS}
    defaults = out["properties"]["synthetic"]["properties"]["defaults"]
    defaults["properties"] = {k: entry[k] for k in spec.DEFAULT_KEYS}
    defaults["required"] = list(spec.DEFAULT_KEYS)
    sweep = out["$defs"]["sweep"]["properties"]
    sweep["axes"]["properties"] = {k: {"$ref": spec.FIELDS_BY_NAME[k].metadata["axis"]} for k in spec.SWEEP_AXES}
    fixed = [
        f.name
        for f in spec.FIELDS
        if f.name in spec.NUMBERS
        and (f.metadata["fixed"] or f.name in spec.SWEEP_AXES or f.name in spec.DEFAULT_KEYS)
        and f.name != "steps"
    ]
    sweep["fixed"]["properties"] = {k: entry[k] for k in fixed}


def validate_config(cfg: dict, schema_path: str | Path) -> None:
    """Check ``cfg`` against the schema, raising one readable line per problem, e.g.
    ``config key synthetic.defaults.eta = 1.5: must be < 1 (label-noise rate, in [0, 1))``, then
    fill in the schema's defaults. Non-finite numbers (.nan, .inf), which a JSON schema lets
    through, are refused too."""
    full = schema(schema_path)
    base = jsonschema.validators.validator_for(full)
    # JSON schema counts 10.0 as an integer; sizes and seeds must be true integers (as in check_run)
    strict = jsonschema.validators.extend(
        base, type_checker=base.TYPE_CHECKER.redefine("integer", lambda _, v: _is_int(v))
    )
    errors = sorted(strict(full).iter_errors(cfg), key=lambda e: [str(p) for p in e.absolute_path])
    lines = [line for error in errors for leaf in _leaves(error) for line in _describe(leaf).splitlines()]
    lines += [f"config key {key} = {value!r}: must be a finite number" for key, value in _non_finite(cfg, [])]
    if lines:
        raise ConfigError("\n".join(dict.fromkeys(lines)))
    for _ in _with_defaults(strict)(full).iter_errors(cfg):
        pass  # valid: this pass only fills in defaults


def _with_defaults(validator_class):
    """A validator class that also sets every missing property that has a schema default."""
    properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, props, instance, schema_):
        if isinstance(instance, dict):
            for name, sub in props.items():
                if isinstance(sub, dict) and "default" in sub:
                    instance.setdefault(name, copy.deepcopy(sub["default"]))
        yield from properties(validator, props, instance, schema_)

    return jsonschema.validators.extend(validator_class, {"properties": set_defaults})


def _key(path) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".") or "(top level)"


def _leaves(error: jsonschema.ValidationError) -> list[jsonschema.ValidationError]:
    """The errors worth showing for a failed oneOf/anyOf: those of the alternatives whose type
    fits the value (a {start, stop, step} grid with a bad step, not "is not a list")."""
    if not error.context:
        return [error]
    branches: dict = {}
    for sub in error.context:
        branches.setdefault(sub.relative_schema_path[0], []).append(sub)
    fitting = [subs for subs in branches.values()
               if not any(s.validator == "type" and s.absolute_path == error.absolute_path for s in subs)]  # fmt: skip
    if not fitting:
        return [error]
    return [leaf for subs in fitting for sub in subs for leaf in _leaves(sub)]


_TYPES = {"integer": "an integer", "number": "a number", "string": "a string", "boolean": "true or false",
          "array": "a list", "object": "a mapping (key: value)", "null": "empty"}  # fmt: skip
_BOUNDS = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}


def _describe(error: jsonschema.ValidationError) -> str:
    """One line naming the config key, its value and what is allowed."""
    path, kind, rule, value = list(error.absolute_path), error.validator, error.validator_value, error.instance
    allowed = error.schema.get("description") if isinstance(error.schema, dict) else None
    if kind == "required":
        why = f" ({allowed})" if allowed else ""
        return "\n".join(
            f"config key {_key(path + [k])} is missing: it is required{why}" for k in rule if k not in value
        )
    if kind == "additionalProperties":
        known = list(error.schema.get("properties", {}))
        return "\n".join(f"config key {_key(path + [k])} = {v!r}: unknown key; allowed under {_key(path)}: {', '.join(known)}"
                         + _owner_of(path, k) for k, v in value.items() if k not in known)  # fmt: skip
    if kind == "type":
        types = rule if isinstance(rule, list) else [rule]
        text = "must be " + " or ".join(_TYPES.get(t, t) for t in types)
    elif kind in _BOUNDS:
        text = f"must be {_BOUNDS[kind]} {rule}"
    elif kind == "multipleOf":
        text = "must be even" if rule == 2 else f"must be a multiple of {rule}"
    elif kind == "minItems":
        text = "must not be empty" if rule == 1 else f"must have at least {rule} items"
    elif kind == "uniqueItems":
        repeated = [v for i, v in enumerate(value) if v in value[:i]]
        text = f"must not repeat a value (repeated: {repeated})"
    elif kind == "minProperties":
        text = f"must have at least {rule} entr{'y' if rule == 1 else 'ies'}"
    elif kind == "enum":
        text = f"must be one of {', '.join(map(repr, rule))}"
    elif kind in ("oneOf", "anyOf") and allowed:
        text, allowed = f"must be {allowed}", None
    else:
        text = error.message
    return f"config key {_key(path)} = {value!r}: {text}" + (f" ({allowed})" if allowed else "")


def _owner_of(path: list, key: str) -> str:
    """For a key set in the wrong model block: which models' run key it is."""
    if len(path) != 2 or path[0] != "synthetic":
        return ""
    owners = [f"synthetic.{name}" for name, m in registry.MODELS.items() if key in m.run_keys]
    return f" ({key} is a run key of {', '.join(owners)})" if owners else ""


def _non_finite(node, path: list):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _non_finite(v, path + [k])
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _non_finite(v, path + [i])
    elif isinstance(node, float) and not math.isfinite(node):
        yield _key(path), node


def grid(spec, key: str) -> list[float]:
    """A grid given as a list or as {start, stop, step} (stop included)."""
    if isinstance(spec, dict):
        start, stop, step = (spec.get(k) for k in ("start", "stop", "step"))
        for name, v in (("start", start), ("stop", stop), ("step", step)):
            if not _is_number(v):
                raise ConfigError(f"{key}.{name} must be a number, got {v!r}")
        if step <= 0:
            raise ConfigError(f"{key}.step must be positive, got {step!r}")
        if stop < start:
            raise ConfigError(f"{key}: stop ({stop!r}) is below start ({start!r})")
        count = int(math.floor((stop - start) / step + 1e-9)) + 1
        values = [start + i * step for i in range(count)]
        values = [round(v, 10) for v in values]
        if all(isinstance(v, int) for v in (start, step)):
            values = [int(v) for v in values]
    elif isinstance(spec, list):
        values = list(spec)
    else:
        raise ConfigError(f"{key} must be a list or {{start, stop, step}}, got {spec!r}")
    if not values:
        raise ConfigError(f"{key} is empty")
    if len(set(values)) != len(values):
        dup = sorted({v for v in values if values.count(v) > 1})
        raise ConfigError(f"{key} has duplicate values: {dup}")
    return values


def _is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def check_run(run: dict, where: str) -> None:
    """Refuse a synthetic run that cannot be trained, naming the key, value and what is allowed."""

    def bad(key, allowed):
        raise ConfigError(f"{where}.{key} = {run.get(key)!r}: {allowed}")

    for key in spec.INTEGERS:
        if key in spec.NUMBERS and key not in spec.MODEL_KEYS and not _is_int(run.get(key)):
            bad(key, "must be an integer")
    for key in spec.REALS:
        if not _is_number(run.get(key)):
            bad(key, "must be a finite number")
    if run["n"] < 2 or run["n"] % 2:
        bad("n", "must be an even integer >= 2 (classes are balanced)")
    if run["n_test"] < 2 or run["n_test"] % 2:
        bad("n_test", "must be an even integer >= 2 (classes are balanced)")
    if run["T"] < 3:
        bad("T", "must be >= 3 (a relevant, a weak and an opposite-class token)")
    if run["d"] < 2:
        bad("d", "must be >= 2 (two orthogonal class signals)")
    for key in spec.REALS:  # the positive ones (their schema: posnum)
        if spec.FIELDS_BY_NAME[key].metadata["schema"] == spec.POSNUM and run[key] <= 0:
            bad(key, "must be positive")
    if run["steps"] < 1:
        bad("steps", "must be >= 1")
    if not 0 <= run["eta"] < 1:
        bad("eta", "must be in [0, 1)")
    if run["model"] not in registry.MODELS:
        bad("model", f"unknown model; known: {', '.join(registry.MODELS)}")
    engine = run.get("engine") or "explicit"
    if engine not in spec.ENGINES:
        bad("engine", f"must be one of {', '.join(spec.ENGINES)}")
    engines = registry.MODELS[run["model"]].engines
    if engine != "auto" and engine not in engines:
        bad("engine", f"model {run['model']!r} has the engines {', '.join(engines)} only")
    if engine == "gram" and run["d"] < spec.gram_min_d(run["n"], run["T"]):
        bad("d", f"the Gram engine (engine 'gram') needs d >= 2(nT + 2) = {spec.gram_min_d(run['n'], run['T'])}")
    for key in registry.MODELS[run["model"]].run_keys:  # their schemas: positive integers
        if not _is_int(run.get(key)) or run[key] < 1:
            bad(key, f"must be a positive integer for model {run['model']!r}")


def _same(a, b) -> bool:
    """Whether two axis values are the same number (or the same value)."""
    try:
        return math.isclose(float(a), float(b), rel_tol=1e-9)
    except (TypeError, ValueError):
        return a == b


def excluded(run: dict, exclude: list[dict]) -> bool:
    """Whether a run's axis values match one of a sweep's ``exclude`` combinations."""
    return any(all(_same(run[key], value) for key, value in combo.items()) for combo in exclude)


def check_sweep(where: str, name: str, sweep: dict, steps: int) -> None:
    """Refuse a sweep whose fixed values repeat an axis, whose logging outgrows its horizon, or
    (the sweep named heatmap, which draws the loss heatmap) whose axes are not d and signal_norm."""
    for key in sweep.get("fixed", {}):
        if key in sweep["axes"]:
            raise ConfigError(
                f"{where}.fixed.{key} = {sweep['fixed'][key]!r}: {key} is an axis of this sweep; set it in one place"
            )
    for k, combo in enumerate(sweep.get("exclude", [])):
        for key, value in combo.items():
            if key not in sweep["axes"]:
                raise ConfigError(f"{where}.exclude[{k}].{key} = {value!r}: {key} is not an axis of this sweep")
            values = grid(sweep["axes"][key], f"{where}.axes.{key}")
            if not any(_same(value, v) for v in values):
                raise ConfigError(f"{where}.exclude[{k}].{key} = {value!r}: not a value of the axis ({values})")
    for key in ("log_points", "log_every"):
        if sweep.get(key, 0) > steps:
            raise ConfigError(f"{where}.{key} = {sweep[key]!r}: more than the sweep's horizon of {steps} steps")
    if name == "heatmap" and set(sweep["axes"]) != {"d", "signal_norm"}:
        raise ConfigError(
            f"{where}.axes = {sorted(sweep['axes'])}: the heatmap sweep draws (d, signal_norm); give exactly those axes"
        )


def check_boundary_fits(cfg: dict) -> None:
    """Refuse boundary fits over a model or sweeps the config does not train, at a horizon no
    fitted sweep reaches, or a refinement of a sweep that is not fitted or past its length."""
    fits = cfg["synthetic"].get("boundary_fits")
    if not fits:
        return
    where = "config key synthetic.boundary_fits"
    block = cfg["synthetic"].get(fits["model"])
    if block is None:
        raise ConfigError(f"{where}.model = {fits['model']!r}: no block synthetic.{fits['model']} in the config")
    sweeps = block.get("sweeps", {})
    lengths = {}
    for name in fits["sweeps"]:
        if name not in sweeps:
            raise ConfigError(
                f"{where}.sweeps: {name!r} is not a sweep of synthetic.{fits['model']} ({', '.join(sweeps) or 'none'})"
            )
        lengths[name] = sweeps[name].get("steps", cfg["synthetic"]["defaults"]["steps"])
    for horizon in fits["horizons"]:
        if horizon > max(lengths.values()):
            raise ConfigError(
                f"{where}.horizons: {horizon} is past every fitted sweep's steps "
                f"({', '.join(f'{k} {v}' for k, v in lengths.items())})"
            )
    refine = fits.get("refine")
    if refine:
        if refine["sweep"] not in lengths:
            raise ConfigError(
                f"{where}.refine.sweep = {refine['sweep']!r}: not one of the fitted sweeps {fits['sweeps']!r}"
            )
        if refine["horizon"] > lengths[refine["sweep"]]:
            raise ConfigError(
                f"{where}.refine.horizon = {refine['horizon']}: past the {lengths[refine['sweep']]} steps of sweep "
                f"{refine['sweep']!r}"
            )


def check_projection(cfg: dict) -> None:
    """Refuse a Figure 1 data set that cannot be drawn, before any job runs."""
    proj = {k: v for k, v in cfg["synthetic"]["projection"].items() if k != "lambdas"}
    # no training (lr, steps unused) and unit noise, as DataSpec's default sigma
    check_run({"sigma": 1.0, **proj, "model": "token", "lr": 1.0, "steps": 1}, "config key synthetic.projection")


def warnings(cfg: dict) -> list[str]:
    """Legal but suspicious settings, e.g. an eta that flips no label at the given n.

    Every training run takes n and eta from ``synthetic.defaults``; Figure 1 has its own."""
    out = []
    for block in ("defaults", "projection"):
        n, eta = cfg["synthetic"][block]["n"], cfg["synthetic"][block]["eta"]
        if eta > 0 and spec.n_flips(n, eta) == 0:
            out.append(f"config key synthetic.{block}.eta = {eta!r} flips no label at n = {n!r} (needs eta * n > 1)")
    return out


# ---------------------------------------------------------------- real data (docs/real_protocol.md)


def check_real_grid(counts: dict[str, list], rates: dict[str, list]) -> None:
    """Refuse real-data grid values a schema lets through: {key: values} of positive integers
    (n, seeds) and of label-noise rates in [0, 1)."""
    for key, values in counts.items():
        for v in values:
            if not _is_int(v) or v < 1:
                raise ConfigError(f"{key}: {v!r} must be a positive integer")
    for key, values in rates.items():
        for v in values:
            if not _is_number(v) or not 0 <= v < 1:
                raise ConfigError(f"{key}: {v!r} must be a number in [0, 1)")


def check_dataset(name: str, entry: dict, backbones: dict) -> None:
    where = f"real.datasets.{name}"
    kind = entry["source"].get("kind")
    if kind not in real_registry.SOURCE_KINDS:
        raise ConfigError(
            f"{where}.source.kind = {kind!r}: unknown source kind; known: {list(real_registry.SOURCE_KINDS)}"
        )
    if entry["backbone"] not in backbones:
        raise ConfigError(f"{where}.backbone = {entry['backbone']!r}: not among real.backbones {sorted(backbones)}")
    bkind = backbones[entry["backbone"]].get("kind")
    if bkind not in real_registry.BACKBONE_KINDS:
        raise ConfigError(
            f"real.backbones.{entry['backbone']}.kind = {bkind!r}: unknown; known: {list(real_registry.BACKBONE_KINDS)}"
        )
    reads = backbones[entry["backbone"]].get("modality", real_registry.BACKBONE_KINDS[bkind].modality)
    if reads is not None and entry["modality"] != reads:
        raise ConfigError(
            f"config key {where}.modality = {entry['modality']!r}: its backbone {entry['backbone']!r} reads {reads}"
        )
    classes = entry["classes"]
    if len(classes) < 2 or len(set(map(str, classes))) != len(classes):
        raise ConfigError(f"{where}.classes = {classes!r}: needs at least 2 distinct classes")


def check_split_size(name: str, entry: dict, max_n: int) -> None:
    """pretrain_size + n must fit the training split, where the config tells its size."""
    size = entry.get("train_size")
    sub = (entry.get("subsample") or {}).get("train")
    if sub is not None:
        size = sub if size is None else min(size, sub)
    if size is not None and entry["pretrain_size"] + max_n > size:
        raise ConfigError(
            f"real.datasets.{name}: pretrain_size {entry['pretrain_size']} + n {max_n} = "
            f"{entry['pretrain_size'] + max_n} exceeds its training split of {size} rows"
        )
