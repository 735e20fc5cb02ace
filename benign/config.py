"""Experiment configuration -> training jobs, and the checks a JSON schema cannot express.

Torch-free on purpose: the workflow imports this at parse time (every cluster job re-parses
the Snakefile, so the top level must stay cheap).
"""

from __future__ import annotations

import hashlib
import math
import numbers
from pathlib import Path

import jsonschema
import yaml

PACKAGE = Path(__file__).resolve().parent

# Library sources whose edits change synthetic training results.
SYNTHETIC_SOURCES = ("synthetic.py", "label_noise.py", "token_selection.py", "encoder.py", "trainer.py", "theory.py", "schema.py")
NAMED_SETTINGS = ("benign", "harmful", "not_overfitting")
RUN_KEYS = ("n", "T", "rho", "eta", "sigma", "n_test", "lr", "steps")


class ConfigError(ValueError):
    """A configuration value that cannot be used; the message names the key and the value."""


def fingerprint(*names: str) -> str:
    """Short hash of library sources, so that editing them reruns the jobs that use them."""
    h = hashlib.sha256()
    for name in sorted(names):
        h.update(name.encode())
        h.update((PACKAGE / name).read_bytes())
    return h.hexdigest()[:16]


def validate_config(cfg: dict, schema_path: str | Path) -> None:
    """Check ``cfg`` against the JSON schema, raising one readable line per problem, e.g.
    ``config key synthetic.defaults.eta = 1.5: must be < 1 (label-noise rate, in [0, 1))``.
    Non-finite numbers (.nan, .inf), which a JSON schema lets through, are refused too."""
    schema = yaml.safe_load(Path(schema_path).read_text())
    base = jsonschema.validators.validator_for(schema)
    # JSON schema counts 10.0 as an integer; sizes and seeds must be true integers (as in check_run)
    strict = base.TYPE_CHECKER.redefine("integer", lambda checker, value: _is_int(value))
    validator = jsonschema.validators.extend(base, type_checker=strict)(schema)
    errors = sorted(validator.iter_errors(cfg), key=lambda e: [str(p) for p in e.absolute_path])
    lines = [line for error in errors for leaf in _leaves(error) for line in _describe(leaf).splitlines()]
    lines += [f"config key {key} = {value!r}: must be a finite number" for key, value in _non_finite(cfg, [])]
    if lines:
        raise ConfigError("\n".join(dict.fromkeys(lines)))


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
        return "\n".join(f"config key {_key(path + [k])} is missing: it is required" for k in rule if k not in value)
    if kind == "additionalProperties":
        known = list(error.schema.get("properties", {}))
        return "\n".join(f"config key {_key(path + [k])} = {v!r}: unknown key; allowed under {_key(path)}: {', '.join(known)}"
                         for k, v in value.items() if k not in known)  # fmt: skip
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

    for key in ("n", "T", "d", "n_test", "steps", "seed"):
        if not _is_int(run.get(key)):
            bad(key, "must be an integer")
    for key in ("rho", "signal_norm", "sigma", "lr", "eta"):
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
    for key in ("rho", "signal_norm", "sigma", "lr"):
        if run[key] <= 0:
            bad(key, "must be positive")
    if run["steps"] < 1:
        bad("steps", "must be >= 1")
    if not 0 <= run["eta"] < 1:
        bad("eta", "must be in [0, 1)")
    if run["model"] == "encoder" and (not _is_int(run.get("mlp_dim")) or run["mlp_dim"] < 1):
        bad("mlp_dim", "must be a positive integer for the encoder")


def _base(cfg: dict, model: str) -> dict:
    syn = cfg["synthetic"]
    base = {k: syn["defaults"][k] for k in RUN_KEYS}
    base["model"] = model
    base["mlp_dim"] = syn["encoder"]["mlp_dim"] if model == "encoder" else None
    return base


def synthetic_jobs(cfg: dict) -> dict[str, list[dict]]:
    """Every synthetic training job, as {job id: [run dicts]} (plain types, for ``params``).

    Job ids: ``{model}_settings`` (the three named settings x seeds, attention recorded),
    ``{model}_delayed`` (long benign runs, log-spaced curves) and ``{model}_heatmap_{k}``
    (the sweep, chunked by ``d`` so that one job trains many runs).
    """
    syn = cfg["synthetic"]
    if "mlp_dim" in syn["token"]:
        raise ConfigError(
            f"config key synthetic.token.mlp_dim = {syn['token']['mlp_dim']!r}: the token-selection model has no MLP; "
            "mlp_dim belongs under synthetic.encoder"
        )
    jobs: dict[str, list[dict]] = {}
    for model in ("token", "encoder"):
        mcfg = syn[model]
        base = _base(cfg, model)
        runs = []
        if len(set(mcfg["seeds"])) != len(mcfg["seeds"]):
            raise ConfigError(f"synthetic.{model}.seeds has duplicates: {mcfg['seeds']}")
        for name in NAMED_SETTINGS:
            for seed in mcfg["seeds"]:
                runs.append({**base, **mcfg["settings"][name], "seed": seed, "setting": name,
                             "log_every": mcfg.get("log_every", 10), "record_attention": True})  # fmt: skip
        jobs[f"{model}_settings"] = runs
        delayed = mcfg.get("delayed")
        if delayed:
            extra = {k: v for k, v in delayed.items() if k not in ("seeds", "log_points")}
            jobs[f"{model}_delayed"] = [
                {**base, **extra, "seed": seed, "setting": "delayed", "log_points": delayed["log_points"]}
                for seed in delayed["seeds"]
            ]
        hm = mcfg["heatmap"]
        ds = grid(hm["d"], f"synthetic.{model}.heatmap.d")
        norms = grid(hm["signal_norm"], f"synthetic.{model}.heatmap.signal_norm")
        seeds = hm["seeds"]
        if len(set(seeds)) != len(seeds):
            raise ConfigError(f"synthetic.{model}.heatmap.seeds has duplicates: {seeds}")
        per_job = hm.get("d_per_job", 1)
        for k in range(0, len(ds), per_job):
            jobs[f"{model}_heatmap_{k // per_job:02d}"] = [
                {**base, "d": d, "signal_norm": m, "seed": seed, "setting": "heatmap"}
                for d in ds[k : k + per_job]
                for seed in seeds
                for m in norms
            ]
    for job, runs in jobs.items():
        for i, run in enumerate(runs):
            check_run(run, f"synthetic job {job} (setting {run['setting']!r}, d={run.get('d')!r}, signal_norm={run.get('signal_norm')!r})")
    return jobs


def n_flips(n: int, eta: float) -> int:
    """Labels the synthetic protocol flips: 2 * floor(ceil(eta n) / 2) (SPEC 1)."""
    return 2 * (math.ceil(eta * n - 1e-9) // 2)


def check_projection(cfg: dict) -> None:
    """Refuse a Figure 1 data set that cannot be drawn, before any job runs."""
    proj = {k: v for k, v in cfg["synthetic"]["projection"].items() if k != "lambdas"}
    # no training (lr, steps unused) and unit noise, as SyntheticConfig's default sigma
    check_run({"sigma": 1.0, **proj, "model": "token", "lr": 1.0, "steps": 1}, "config key synthetic.projection")


def warnings(cfg: dict) -> list[str]:
    """Legal but suspicious settings, e.g. an eta that flips no label at the given n.

    Every training run takes n and eta from ``synthetic.defaults``; Figure 1 has its own."""
    out = []
    for block in ("defaults", "projection"):
        n, eta = cfg["synthetic"][block]["n"], cfg["synthetic"][block]["eta"]
        if eta > 0 and n_flips(n, eta) == 0:
            out.append(f"config key synthetic.{block}.eta = {eta!r} flips no label at n = {n!r} (needs eta * n > 1)")
    return out
