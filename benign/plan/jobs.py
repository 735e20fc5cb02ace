"""The jobs a valid configuration asks for, from the config as benign.plan.config_values read it.
Nothing here checks a value: benign.plan.validate has checked the config, and the runs composed
here, before any job is packed (benign.plan.load). What is refused on the way is only what
planning alone can tell: a job that does not fit the cluster's ceilings (benign.plan.resources,
benign.plan.real_resources).

Torch-free: the workflow plans at parse time. Runs reach the jobs as plain dicts (``params``),
so that changing a value reruns exactly the jobs that hold it.
"""

from __future__ import annotations

from benign.plan import real_resources, resources
from benign.plan.config_values import Config, Model, Sweep
from benign.synthetic import spec


def job_prefix(model: str, setting: str) -> str:
    """The id of a model's jobs of one setting, before their number (benign.plan.resources.pack):
    the planned sweeps', the named settings', and the atlas's refinement's alike."""
    return f"{model}_{setting}"


def synthetic_groups(config: Config) -> list[tuple[str, list[dict], int | None]]:
    """Every synthetic run, as (job prefix, runs, batches per job), before packing.

    Every registered model with a block ``synthetic.<model>`` in the config gets runs: the group
    ``settings`` (the three named settings x seeds, attention recorded, one job), ``delayed``
    (long benign runs, log-spaced curves, one job) and each named sweep of
    ``synthetic.<model>.sweeps`` (:func:`sweep_groups`).
    """
    groups: list[tuple[str, list[dict], int | None]] = []
    for model, configured in config.models.items():
        mcfg, base = configured.block, configured.base
        named = [{**base, **mcfg["settings"][name], "seed": seed, "setting": name, "sweeps": [name],
                  "log_every": mcfg["log_every"], "record_attention": True}
                 for name in spec.NAMED_SETTINGS for seed in mcfg["seeds"]]  # fmt: skip
        groups.append((job_prefix(model, "settings"), named, None))
        delayed = mcfg.get("delayed")
        if delayed:
            extra = {k: v for k, v in delayed.items() if k not in ("seeds", "log_points")}
            runs = [{**base, **extra, "seed": seed, "setting": "delayed", "sweeps": ["delayed"],
                     "log_points": delayed["log_points"]} for seed in delayed["seeds"]]  # fmt: skip
            groups.append((job_prefix(model, "delayed"), runs, None))
        fitted = config.fits.get("sweeps", ()) if config.fits.get("model") == model else ()
        groups += [(job_prefix(model, name), runs, per_job) for name, runs, per_job in sweep_groups(configured, fitted)]
    return groups


def synthetic_jobs(config: Config, groups: list | None = None) -> dict[str, list[dict]]:
    """Every synthetic training job, as {job id: [run dicts]} (plain types, for ``params``): the
    runs of :func:`synthetic_groups` (or the checked ``groups``) with the engine, lr and flow
    tolerance they train at, packed by benign.plan.resources.pack (ids ``{prefix}_{k}``)."""
    jobs: dict[str, list[dict]] = {}
    for prefix, runs, per_job in synthetic_groups(config) if groups is None else groups:
        for run in runs:  # what the run trains at, as its spec derives it (one owner: RunSpec), read back
            resolved = spec.RunSpec(**run)
            if "engine" in run:  # runs that never name one keep their params (and their jobs) as they were
                run["engine"] = resolved.engine
            if run.get("step_size") is not None:
                run["lr"] = resolved.lr
            if run.get("integrator") == "flow":
                run["flow_tol"] = resolved.flow_tol
        jobs.update(resources.pack(runs, prefix, per_job, config.cluster))
    return jobs


def sweep_runs(sweep: Sweep, base: dict) -> list[dict]:
    """The runs of a named sweep: every combination of its axes' values (docs/regimes.md#sweeps)
    but those its ``exclude`` lists and those whose SNR is outside its ``snr_range``, for every
    seed, on the sweep's fixed values, horizon and logging."""
    fixed = {**base, **sweep.fixed, "steps": sweep.steps, "setting": sweep.name, "sweeps": [sweep.name],
             "log_every": sweep.log_every, "log_points": sweep.log_points}  # fmt: skip
    runs = [{**fixed, **cell} for cell in sweep.cells]
    if sweep.snr_range is not None:
        low, high = sweep.snr_range
        runs = [
            run
            for run in runs
            if low * (1 - 1e-9) <= spec.snr(run["signal_norm"], run["sigma"], run["d"]) <= high * (1 + 1e-9)
        ]
    return [{**run, "seed": seed} for run in runs for seed in sweep.seeds]


LENGTH = ("steps", "log_every", "log_points")  # how long a run trains and what it logs: not what it is


def _identity(run: dict, by_prefix: bool) -> tuple:
    """What makes two planned runs the same run: every field but the sweeps that asked for it;
    ``by_prefix``: nor its length (gradient descent is deterministic, so a shorter run is a
    prefix of a longer one: the same run for a reader of its curve at horizons)."""
    skip = ("setting", "sweeps", *LENGTH) if by_prefix else ("setting", "sweeps")
    return tuple(sorted((k, v) for k, v in run.items() if k not in skip))


def sweep_groups(model: Model, read_at_horizons=()) -> list[tuple[str, list[dict], int]]:
    """(name, runs it trains, batches per job) of a model's named sweeps. A run that several
    sweeps ask for is trained once, by one of them (its ``setting``); its ``sweeps`` list every
    sweep that reads it, that one first. Runs are the same when every parameter, length and
    logging agree; among the sweeps ``read_at_horizons`` (read only through their curves, at
    horizons: the boundary fits') also when only their lengths differ, and the longest is trained."""
    runs: list[dict] = []
    exact: dict[tuple, dict] = {}  # identity with length -> kept run
    prefix: dict[tuple, dict] = {}  # identity without length -> kept run of a sweep read at horizons
    for name, sweep in model.sweeps.items():
        fitted = name in read_at_horizons
        for run in sweep_runs(sweep, model.base):
            kept = exact.get(_identity(run, False))
            if kept is None and fitted:
                kept = prefix.get(_identity(run, True))
            if kept is None:
                runs.append(run)
                exact[_identity(run, False)] = run
                if fitted:
                    prefix[_identity(run, True)] = run
                continue
            others = [s for s in kept["sweeps"] if s != name]
            if run["steps"] > kept["steps"]:  # the longer length is trained, by this sweep
                del exact[_identity(kept, False)]
                kept.update({k: run[k] for k in LENGTH})
                exact[_identity(kept, False)] = kept
                kept["sweeps"] = [name, *others]
            else:
                kept["sweeps"] = [*others, name]
            kept["setting"] = kept["sweeps"][0]
    return [
        (name, [run for run in runs if run["setting"] == name], sweep.batches_per_job)
        for name, sweep in model.sweeps.items()
    ]


def real_cells(config: Config) -> dict[str, dict]:
    """Every real-data training job, {job id: cell}: one (data set, seed, n) with all its etas.

    The main grid's cells and the eta sweep's cell (n, seed) share jobs: label noise is nested
    across eta for a seed, so a run is the same whichever artifact asked for it.
    """
    real = config.real
    if not real:
        return {}
    sweep = real.eta_sweep
    cells = {}
    for name in real.use:
        dataset_ns = real.datasets[name].get("n", real.ns)  # a data set may run a subset of n (BreastMNIST: no 1000)
        wanted = [(seed, n, list(real.etas)) for seed in real.seeds for n in dataset_ns]
        if sweep:
            wanted.append((sweep["seed"], sweep["n"], sweep["etas"]))
        for seed, n, cell_etas in wanted:
            job = f"{name}_s{seed}_n{n}"
            cell = cells.setdefault(job, {"dataset": name, "seed": seed, "n": n, "etas": []})
            cell["etas"] = sorted(set(cell["etas"]) | {round(float(e), 6) for e in cell_etas})
    return real_resources.split_to_fit(config, cells)


def real_feature_rows(cells: dict, dataset: str) -> tuple[int, list[int]]:
    """(largest n, every seed) that fine-tune on a data set, of the planned ``cells``
    (:func:`real_cells`): the rows its feature cache keeps."""
    mine = [c for c in cells.values() if c["dataset"] == dataset]
    return max(c["n"] for c in mine), sorted({c["seed"] for c in mine})


def max_margin_runs(config: Config) -> dict[str, list[dict]]:
    """The runs of the attention-SVM check (``max_margin``, benign.synthetic.max_margin_alignment), per model: the W-fixed model at the named
    settings and along the SNR sweep, the paper's model at the named settings (its own seeds);
    n, T, rho, eta, sigma and lr from the synthetic defaults."""
    mm = config.max_margin
    if not mm:
        return {}
    defaults = config.defaults
    # the defaults' test set: the long-time label reads it (the training set is drawn before it, so
    # the alignment's numbers do not depend on its size)
    base = {**{k: defaults[k] for k in spec.DEFAULT_KEYS}, **{k: None for k in spec.MODEL_KEYS}}
    named = [(name, s["d"], s["signal_norm"]) for name, s in mm["settings"].items()]
    sweep = mm.get("snr_sweep")
    plans = {mm["model"]: (named + [(f"snr_{m:g}", sweep["d"], m) for m in sweep["signal_norm"]] if sweep else named,
                            mm["seeds"])}  # fmt: skip
    if mm.get("paper_model") not in (None, "null"):
        plans[mm["paper_model"]] = (named, mm.get("paper_seeds") or mm["seeds"])
    runs = {
        model: [
            dict(
                base, model=model, setting=name, d=int(d), signal_norm=float(m), seed=int(seed), steps=int(mm["steps"])
            )
            for name, d, m in points
            for seed in seeds
        ]
        for model, (points, seeds) in plans.items()
    }
    return runs
