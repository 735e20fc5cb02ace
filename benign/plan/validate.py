"""The configuration's validation: the JSON schema (benign.plan.schema, generated and complete:
every key's type, bounds and default) and the checks a schema cannot express, those across keys,
on the config as benign.plan.config_values read it (which refuses what cannot be read: a range
that runs backwards, an exclusion off its sweep's axes, a bad cluster value). Every message names
the key, the value and what is allowed.

Torch-free on purpose: the workflow imports this at parse time (every cluster job re-parses
the Snakefile, so the top level must stay cheap). No training job imports it, so rewording a
message here reruns nothing.
"""

from __future__ import annotations

import copy
import functools
import math
import numbers
from pathlib import Path

import jsonschema

from benign.plan import ConfigError
from benign.plan import schema as config_schema
from benign.plan.config_values import Config, Real, Sweep
from benign.real import registry as real_registry
from benign.synthetic import registry, spec


def validate_config(cfg: dict, schema_path: str | Path = config_schema.PATH) -> None:
    """Check ``cfg`` against the schema, raising one readable line per problem, e.g.
    ``config key synthetic.defaults.eta = 1.5: must be < 1 (label-noise rate, in [0, 1))``, then
    fill in the schema's defaults. Non-finite numbers (.nan, .inf), which a JSON schema lets
    through, are refused too."""
    full = config_schema.load(schema_path)
    _check_current(full)
    strict = _strict(full)
    errors = sorted(strict(full).iter_errors(cfg), key=lambda e: [str(p) for p in e.absolute_path])
    lines = [f"config key {_key(path)}{text}" for error in errors for leaf in _leaves(error)
             for path, text in _describe(leaf, full)]  # fmt: skip
    lines += [f"config key {key} = {value!r}: must be a finite number" for key, value in _non_finite(cfg, [])]
    if lines:
        raise ConfigError("\n".join(dict.fromkeys(lines)))
    for _ in _with_defaults(strict)(full).iter_errors(cfg):
        pass  # valid: this pass only fills in defaults


def drop_switched_off(cfg: dict) -> list[str]:
    """Remove every sweep whose ``skip`` is true from ``cfg`` (in place), and the key from the
    others, before anything reads the sweeps: a sweep switched off is as if it were not there.
    Returns the sweeps removed (``<model>.<sweep>``)."""
    removed = []
    for model, block in (cfg.get("synthetic") or {}).items():
        sweeps = block.get("sweeps") if isinstance(block, dict) else None
        if not isinstance(sweeps, dict):
            continue
        for name in list(sweeps):
            if sweeps[name].pop("skip", False):
                del sweeps[name]
                removed.append(f"{model}.{name}")
    return removed


def check_config(config: Config) -> None:
    """The checks across keys, on a config :func:`validate_config` has passed and
    benign.plan.config_values has read, before anything is planned: every sweep of every
    configured model, the real-data grid and data sets, the attention-SVM check's horizons and
    the boundary fits."""
    for model in config.models.values():
        for sweep in model.sweeps.values():
            check_sweep(sweep)
    if config.real:
        check_real(config.real)
    mm = config.max_margin
    if mm and max(mm["horizons"]) > mm["steps"]:
        raise ConfigError(f"config key max_margin.horizons = {mm['horizons']!r}: past its {mm['steps']} steps")
    check_boundary_fits(config)


def check_runs(groups: list, max_margin_runs: dict) -> None:
    """Every composed run (benign.plan.jobs.synthetic_groups and max_margin_runs) against
    :func:`check_run`, before the jobs are packed."""
    for prefix, runs, _ in groups:
        for run in runs:
            check_run(
                run,
                f"synthetic {prefix} (setting {run['setting']!r}, d={run.get('d')!r}, signal_norm={run.get('signal_norm')!r})",
            )
    for model, runs in max_margin_runs.items():
        for run in runs:
            check_run(run, f"config key max_margin ({model}, setting {run['setting']})")


def _strict(full: dict):
    """The schema's validator class, with integers that are true integers: JSON schema counts
    10.0 as an integer; sizes and seeds must not be."""
    base = jsonschema.validators.validator_for(full)
    return jsonschema.validators.extend(
        base, type_checker=base.TYPE_CHECKER.redefine("integer", lambda _, v: _is_int(v))
    )


def _check_current(full: dict) -> None:
    """Refuse a schema generated before the registry last changed (a model or kind it lacks)."""
    props = full["properties"]
    real = props["real"]["properties"]
    have = {
        "models": [m for m in props["synthetic"]["properties"] if m in registry.MODELS],
        "source kinds": real["datasets"]["additionalProperties"]["properties"]["source"]["properties"]["kind"]["enum"],
        "backbone kinds": real["backbones"]["additionalProperties"]["properties"]["kind"]["enum"],
    }
    want = {"models": list(registry.MODELS), "source kinds": list(real_registry.SOURCE_KINDS),
            "backbone kinds": list(real_registry.BACKBONE_KINDS)}  # fmt: skip
    for what, names in want.items():
        if sorted(have[what]) != sorted(names):
            raise ConfigError(
                f"the config schema is out of date: its {what} are {have[what]}, the registries have "
                f"{names}; run {config_schema.COMMAND}"
            )


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


def _description(error: jsonschema.ValidationError, root: dict | None) -> str | None:
    """What the failing key is: its schema's description, else that of the key that refers to it
    (a model's run key refers to the run spec's field for its bounds): the description of the
    deepest schema on the error's path through ``root``, the whole schema."""
    if isinstance(error.schema, dict) and error.schema.get("description"):
        return error.schema["description"]
    found, node = None, root
    for step in list(error.absolute_schema_path)[:-1]:
        if not isinstance(node, dict | list) or (isinstance(node, dict) and step not in node):
            break
        node = node[step]
        found = node.get("description") if isinstance(node, dict) else None
    return found


def _describe(error: jsonschema.ValidationError, root: dict | None = None) -> list[tuple[list, str]]:
    """(key path, text) of each problem an error names: the text follows the key's name, e.g.
    `` = 11: must be even (training samples ...)`` or `` is missing: it is required``. ``root``:
    the whole schema, where a key's description may sit beside its reference."""
    path, kind, rule, value = list(error.absolute_path), error.validator, error.validator_value, error.instance
    allowed = _description(error, root)
    if kind == "required":
        why = f" ({allowed})" if allowed else ""
        return [(path + [k], f" is missing: it is required{why}") for k in rule if k not in value]
    if kind == "additionalProperties":
        known = list(error.schema.get("properties", {}))
        return [(path + [k], f" = {v!r}: unknown key; allowed under {_key(path)}: {', '.join(known)}"
                 + _owner_of(path, k)) for k, v in value.items() if k not in known]  # fmt: skip
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
    elif kind == "maxProperties":
        text = f"must have at most {rule} entr{'y' if rule == 1 else 'ies'}"
    elif kind == "enum":
        text = f"must be one of {', '.join(map(repr, rule))}"
    elif kind in ("oneOf", "anyOf") and allowed:
        text, allowed = f"must be {allowed}", None
    else:
        text = error.message
    return [(path, f" = {value!r}: {text}" + (f" ({allowed})" if allowed else ""))]


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


def _is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def check_run(run: dict, where: str) -> None:
    """Refuse a synthetic run that cannot be trained, naming the key, value and what is allowed:
    its values against the schema's ``$defs/run`` (the spec's fields), then what depends on
    several of them (the model, its engines and its own run keys)."""
    validator, required = _run_schema()
    lines = [f"{where}.{k} is missing: it is required" for k in required if k not in run]
    for key, value in run.items():
        if key in validator.schema["properties"] and not (value is None and key not in required):
            lines += [f"{where}.{_key(path)}{text}" for path, text in _value_errors(validator, key, value)]
    if lines:
        raise ConfigError("\n".join(lines))

    if problem := spec.model_problem(run):
        key, allowed = problem
        raise ConfigError(f"{where}.{key} = {run.get(key)!r}: {allowed}")


@functools.cache
def _run_schema():
    """(a validator of one run's values, the parameters every run has): the generated schema's
    ``$defs/run``, its references resolved in that schema."""
    full = config_schema.load()
    run = full["$defs"]["run"]
    return _strict(full)({"$defs": full["$defs"], "properties": run["properties"]}), tuple(run["required"])


_VALUE_ERRORS: dict = {}  # (key, type, value) -> its problems: a config's runs share few values


def _value_errors(validator, key: str, value) -> list[tuple[list, str]]:
    """The problems of one run parameter's value, as (path, text) from :func:`_describe`."""
    try:
        memo = (key, type(value), value)
        if memo in _VALUE_ERRORS:
            return _VALUE_ERRORS[memo]
    except TypeError:  # unhashable (a list): not remembered
        memo = None
    out = [pair for error in validator.iter_errors({key: value}) for leaf in _leaves(error) for pair in _describe(leaf)]
    if isinstance(value, float) and not math.isfinite(value):
        out.append(([key], f" = {value!r}: must be a finite number"))
    if memo is not None:
        _VALUE_ERRORS[memo] = out
    return out


def check_sweep(sweep: Sweep) -> None:
    """Refuse a sweep whose fixed values repeat an axis, whose SNR range is empty, or whose logging
    outgrows its horizon (its exclusions are read on its axes, benign.plan.config_values; the
    heatmap sweep's axes are the schema's)."""
    where = sweep.where
    for key in sweep.fixed:
        if key in sweep.axes:
            raise ConfigError(
                f"{where}.fixed.{key} = {sweep.fixed[key]!r}: {key} is an axis of this sweep; set it in one place"
            )
    if sweep.snr_range is not None and not sweep.snr_range[0] < sweep.snr_range[1]:
        raise ConfigError(f"{where}.snr_range = {sweep.snr_range!r}: its low end must be below its high end")
    for key in ("log_points", "log_every"):
        if getattr(sweep, key) > sweep.steps:
            raise ConfigError(
                f"{where}.{key} = {getattr(sweep, key)!r}: more than the sweep's horizon of {sweep.steps} steps"
            )


def check_boundary_fits(config: Config) -> None:
    """Refuse boundary fits over a model or sweeps the config does not train, at a horizon (of
    ``horizons`` or ``along_time``) no fitted sweep reaches, a refinement of a sweep that is not fitted, or a convergence check of
    seeds the refinement does not train."""
    fits = config.fits
    if not fits:
        return
    where = "config key synthetic.boundary_fits"
    model = config.models.get(fits["model"])
    if model is None:
        raise ConfigError(f"{where}.model = {fits['model']!r}: no block synthetic.{fits['model']} in the config")
    sweeps = model.sweeps
    lengths = {}
    for name in fits["sweeps"]:
        if name not in sweeps:
            raise ConfigError(
                f"{where}.sweeps: {name!r} is not a sweep of synthetic.{fits['model']} ({', '.join(sweeps) or 'none'})"
            )
        lengths[name] = sweeps[name].steps
    for key in ("horizons", "along_time"):
        for horizon in fits.get(key) or []:
            if horizon > max(lengths.values()):
                raise ConfigError(
                    f"{where}.{key}: {horizon} is past every fitted sweep's steps "
                    f"({', '.join(f'{k} {v}' for k, v in lengths.items())})"
                )
    refine, convergence = fits.get("refine"), fits.get("convergence")
    if refine and refine["sweep"] not in lengths:
        raise ConfigError(
            f"{where}.refine.sweep = {refine['sweep']!r}: not one of the fitted sweeps {fits['sweeps']!r}"
        )
    if convergence:
        if not refine:
            raise ConfigError(f"{where}.convergence: compares the refined windows; set {where}.refine too")
        seeds = {*refine["seeds"], *sweeps[refine["sweep"]].seeds}
        if missing := [s for s in convergence["seeds"] if s not in seeds]:
            raise ConfigError(
                f"{where}.convergence.seeds = {convergence['seeds']!r}: {missing} are not refined "
                f"(refine.seeds and the sweep's seeds: {sorted(seeds)})"
            )


def warnings(config: Config) -> list[str]:
    """Legal but suspicious settings, e.g. an eta that flips no label at the given n.

    Every training run takes n and eta from ``synthetic.defaults``; Figure 1 has its own."""
    out = []
    for block in ("defaults", "projection"):
        n, eta = config.raw["synthetic"][block]["n"], config.raw["synthetic"][block]["eta"]
        if eta > 0 and spec.n_flips(n, eta) == 0:
            out.append(f"config key synthetic.{block}.eta = {eta!r} flips no label at n = {n!r} (needs eta * n > 1)")
    return out


# ---------------------------------------------------------------- real data (docs/real_protocol.md)


def check_real(real: Real) -> None:
    """The real-data block: its grid's values and every used data set (its backbone, classes, n
    and training split)."""
    ns, sweep = real.ns, real.eta_sweep
    check_real_grid(
        {"real.grid.n": ns, "real.grid.seeds": real.seeds},
        {"real.grid.eta": real.etas, "real.eta_sweep.eta": sweep["etas"] if sweep else []},
    )
    for name in real.use:
        if name not in real.datasets:
            raise ConfigError(f"real.use names {name!r}, which is not in real.datasets {sorted(real.datasets)}")
        entry = real.datasets[name]
        check_dataset(name, entry, real.backbones)
        dataset_ns = entry.get("n", ns)  # a data set may run a subset of n (BreastMNIST: no 1000)
        if not set(dataset_ns) <= set(ns):
            raise ConfigError(
                f"config key real.datasets.{name}.n = {dataset_ns!r}: must be a subset of real.grid.n = {ns!r}"
            )
        check_split_size(name, entry, max([*dataset_ns, *([sweep["n"]] if sweep else [])]))


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
    """Refuse a data set whose backbone is not configured or reads another modality, or whose
    classes are the same as text (they name columns and files). The source and backbone kinds,
    and the classes' count, are the schema's."""
    where = f"real.datasets.{name}"
    if entry["backbone"] not in backbones:
        raise ConfigError(f"{where}.backbone = {entry['backbone']!r}: not among real.backbones {sorted(backbones)}")
    bkind = backbones[entry["backbone"]]["kind"]
    reads = backbones[entry["backbone"]].get("modality", real_registry.BACKBONE_KINDS[bkind].modality)
    if reads is not None and entry["modality"] != reads:
        raise ConfigError(
            f"config key {where}.modality = {entry['modality']!r}: its backbone {entry['backbone']!r} reads {reads}"
        )
    classes = entry["classes"]
    if len(set(map(str, classes))) != len(classes):
        raise ConfigError(f"{where}.classes = {classes!r}: needs distinct classes (as text)")


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
