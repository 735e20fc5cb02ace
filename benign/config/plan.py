"""The jobs a valid configuration asks for (benign.config.validate checks what they hold).

Torch-free: the workflow plans at parse time. Runs reach the jobs as plain dicts (``params``),
so that changing a value reruns exactly the jobs that hold it.
"""

from __future__ import annotations

from itertools import product

from benign import registry
from benign.config import ConfigError
from benign.config.validate import (
    NAMED_SETTINGS,
    RUN_KEYS,
    check_dataset,
    check_real_grid,
    check_run,
    check_split_size,
    check_sweep,
    grid,
)

BATCH_KEYS = ("n", "T", "d", "seed")  # what a sweep's runs share to train as one batch, in the trainer's order


def configured_models(cfg: dict) -> list[str]:
    """The registered models the config has a ``synthetic.<model>`` block for, in registry order."""
    return [name for name in registry.MODELS if name in cfg["synthetic"]]


def _base(cfg: dict, model: str) -> dict:
    syn = cfg["synthetic"]
    base = {k: syn["defaults"][k] for k in RUN_KEYS}
    base["model"] = model
    base["mlp_dim"] = syn[model].get("mlp_dim")  # the encoder's own run key (benign.registry)
    return base


def synthetic_jobs(cfg: dict) -> dict[str, list[dict]]:
    """Every synthetic training job, as {job id: [run dicts]} (plain types, for ``params``).

    Every registered model with a block ``synthetic.<model>`` in the config gets jobs. Job ids:
    ``{model}_settings`` (the three named settings x seeds, attention recorded),
    ``{model}_delayed`` (long benign runs, log-spaced curves) and ``{model}_{sweep}_{k}`` (the
    named sweeps of ``synthetic.<model>.sweeps``, see :func:`sweep_jobs`).
    """
    syn = cfg["synthetic"]
    jobs: dict[str, list[dict]] = {}
    for model in configured_models(cfg):
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
        for name, sweep in mcfg.get("sweeps", {}).items():
            jobs.update(sweep_jobs(model, name, sweep, base))
    for job, runs in jobs.items():
        for run in runs:
            check_run(
                run,
                f"synthetic job {job} (setting {run['setting']!r}, d={run.get('d')!r}, signal_norm={run.get('signal_norm')!r})",
            )
    return jobs


def sweep_jobs(model: str, name: str, sweep: dict, base: dict) -> dict[str, list[dict]]:
    """The jobs ``{model}_{name}_{k}`` of a named sweep: every combination of its axes' values
    (docs/regimes.md#sweeps), for every seed, on the sweep's fixed values, horizon and logging.
    Runs that share a data draw (one n, T, d and seed: a batch) train as one program, and a job
    trains ``batches_per_job`` batches."""
    where = f"config key synthetic.{model}.sweeps.{name}"
    axes = {axis: grid(values, f"{where}.axes.{axis}") for axis, values in sweep["axes"].items()}
    steps = sweep.get("steps", base["steps"])
    check_sweep(where, name, sweep, steps)
    fixed = {**base, **sweep.get("fixed", {}), "steps": steps, "setting": name,
             "log_every": sweep.get("log_every", 0), "log_points": sweep.get("log_points", 0)}  # fmt: skip
    batches: dict[tuple, list[dict]] = {}
    for values in product(*axes.values()):
        for seed in sweep["seeds"]:
            run = {**fixed, **dict(zip(axes, values)), "seed": seed}
            batches.setdefault(tuple(run[k] for k in BATCH_KEYS), []).append(run)
    keys = sorted(batches)
    per_job = sweep.get("batches_per_job", 1)
    return {
        f"{model}_{name}_{k // per_job:02d}": [run for key in keys[k : k + per_job] for run in batches[key]]
        for k in range(0, len(keys), per_job)
    }


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
    check_real_grid(
        {"real.grid.n": ns, "real.grid.seeds": seeds}, {"real.grid.eta": etas, "real.eta_sweep.eta": sweep_etas}
    )
    cells = {}
    for name in real_datasets(cfg):
        entry = real["datasets"][name]
        check_dataset(name, entry, real["backbones"])
        dataset_ns = entry.get("n", ns)  # a data set may run a subset of n (BreastMNIST: no 1000)
        if not set(dataset_ns) <= set(ns):
            raise ConfigError(
                f"config key real.datasets.{name}.n = {dataset_ns!r}: must be a subset of real.grid.n = {ns!r}"
            )
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
            raise ConfigError(
                f"real.use names {name!r}, which is not in real.datasets {sorted(real.get('datasets', {}))}"
            )
    return list(use)


def real_feature_rows(cfg: dict, dataset: str) -> tuple[int, list[int]]:
    """(largest n, every seed) that fine-tune on a data set: the rows its feature cache keeps."""
    cells = [c for c in real_cells(cfg).values() if c["dataset"] == dataset]
    return max(c["n"] for c in cells), sorted({c["seed"] for c in cells})
