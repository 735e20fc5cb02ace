"""Experiment configuration -> training jobs, and the checks a JSON schema cannot express.

Torch-free on purpose: the workflow imports this at parse time (every cluster job re-parses
the Snakefile, so the top level must stay cheap).
"""

from __future__ import annotations

import hashlib
import math
import numbers
from pathlib import Path

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


def warnings(cfg: dict) -> list[str]:
    """Legal but suspicious settings, e.g. an eta that flips no label at the given n."""
    out = []
    for job, runs in synthetic_jobs(cfg).items():
        for run in runs:
            if run["eta"] > 0 and n_flips(run["n"], run["eta"]) == 0:
                out.append(f"synthetic job {job}: eta={run['eta']} flips no label at n={run['n']} (needs eta*n > 1)")
                break
    return out
