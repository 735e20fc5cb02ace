"""The jobs a valid configuration asks for. Nothing here checks a value: benign.plan.validate has
checked the config, and the runs composed here, before any job is packed (benign.plan.load). What
is refused here is only what planning alone can tell: a job that does not fit the cluster's
ceilings, or a grid's range that runs backwards as it is read.

Torch-free: the workflow plans at parse time. Runs reach the jobs as plain dicts (``params``),
so that changing a value reruns exactly the jobs that hold it.
"""

from __future__ import annotations

import math
from itertools import product

from benign.plan import ConfigError, real_resources, resources
from benign.plan.config_values import base_run, configured_models, excluded, grid, sweep_length
from benign.real.records import record_epochs
from benign.synthetic import spec


def job_prefix(model: str, setting: str) -> str:
    """The id of a model's jobs of one setting, before their number (benign.plan.resources.pack):
    the planned sweeps', the named settings', and the atlas's refinement's alike."""
    return f"{model}_{setting}"


def synthetic_groups(cfg: dict) -> list[tuple[str, list[dict], int | None]]:
    """Every synthetic run, as (job prefix, runs, batches per job), before packing.

    Every registered model with a block ``synthetic.<model>`` in the config gets runs: the group
    ``settings`` (the three named settings x seeds, attention recorded, one job), ``delayed``
    (long benign runs, log-spaced curves, one job) and each named sweep of
    ``synthetic.<model>.sweeps`` (:func:`sweep_groups`).
    """
    syn = cfg["synthetic"]
    groups: list[tuple[str, list[dict], int | None]] = []
    for model in configured_models(cfg):
        mcfg = syn[model]
        base = base_run(cfg, model)
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
        fits = syn.get("boundary_fits") or {}
        fitted = fits.get("sweeps", ()) if fits.get("model") == model else ()
        groups += [
            (job_prefix(model, name), runs, per_job)
            for name, runs, per_job in sweep_groups(model, mcfg.get("sweeps", {}), base, fitted)
        ]
    return groups


def synthetic_jobs(cfg: dict, groups: list | None = None) -> dict[str, list[dict]]:
    """Every synthetic training job, as {job id: [run dicts]} (plain types, for ``params``): the
    runs of :func:`synthetic_groups` (or the checked ``groups``) with the engine, lr and flow
    tolerance they train at, packed by benign.plan.resources.pack (ids ``{prefix}_{k}``)."""
    cluster = resources.cluster_settings(cfg)
    jobs: dict[str, list[dict]] = {}
    for prefix, runs, per_job in synthetic_groups(cfg) if groups is None else groups:
        for run in runs:  # what the run trains at, as its spec derives it (one owner: RunSpec), read back
            resolved = spec.RunSpec(**run)
            if "engine" in run:  # runs that never name one keep their params (and their jobs) as they were
                run["engine"] = resolved.engine
            if run.get("step_size") is not None:
                run["lr"] = resolved.lr
            if run.get("integrator") == "flow":
                run["flow_tol"] = resolved.flow_tol
        jobs.update(resources.pack(runs, prefix, per_job, cluster))
    return jobs


def sweep_runs(model: str, name: str, sweep: dict, base: dict) -> list[dict]:
    """The runs of a named sweep: every combination of its axes' values (docs/regimes.md#sweeps)
    but those its ``exclude`` lists and those whose SNR is outside its ``snr_range``, for every
    seed, on the sweep's fixed values, horizon and logging."""
    where = f"config key synthetic.{model}.sweeps.{name}"
    axes = {axis: grid(values, f"{where}.axes.{axis}") for axis, values in sweep["axes"].items()}
    length = sweep_length(sweep, base["steps"])
    fixed = {**base, **sweep.get("fixed", {}), "steps": length["steps"], "setting": name, "sweeps": [name],
             "log_every": length["log_every"], "log_points": length["log_points"]}  # fmt: skip
    cells = [dict(zip(axes, values)) for values in product(*axes.values())]
    runs = [{**fixed, **cell} for cell in cells if not excluded(cell, sweep.get("exclude", []))]
    if "snr_range" in sweep:
        low, high = sweep["snr_range"]
        runs = [
            run
            for run in runs
            if low * (1 - 1e-9) <= spec.snr(run["signal_norm"], run["sigma"], run["d"]) <= high * (1 + 1e-9)
        ]
    return [{**run, "seed": seed} for run in runs for seed in sweep["seeds"]]


LENGTH = ("steps", "log_every", "log_points")  # how long a run trains and what it logs: not what it is


def _identity(run: dict, by_prefix: bool) -> tuple:
    """What makes two planned runs the same run: every field but the sweeps that asked for it;
    ``by_prefix``: nor its length (gradient descent is deterministic, so a shorter run is a
    prefix of a longer one: the same run for a reader of its curve at horizons)."""
    skip = ("setting", "sweeps", *LENGTH) if by_prefix else ("setting", "sweeps")
    return tuple(sorted((k, v) for k, v in run.items() if k not in skip))


def sweep_groups(model: str, sweeps: dict, base: dict, read_at_horizons=()) -> list[tuple[str, list[dict], int]]:
    """(name, runs it trains, batches per job) of a model's named sweeps. A run that several
    sweeps ask for is trained once, by one of them (its ``setting``); its ``sweeps`` list every
    sweep that reads it, that one first. Runs are the same when every parameter, length and
    logging agree; among the sweeps ``read_at_horizons`` (read only through their curves, at
    horizons: the boundary fits') also when only their lengths differ, and the longest is trained."""
    runs: list[dict] = []
    exact: dict[tuple, dict] = {}  # identity with length -> kept run
    prefix: dict[tuple, dict] = {}  # identity without length -> kept run of a sweep read at horizons
    for name, sweep in sweeps.items():
        fitted = name in read_at_horizons
        for run in sweep_runs(model, name, sweep, base):
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
        (name, [run for run in runs if run["setting"] == name], sweep["batches_per_job"])
        for name, sweep in sweeps.items()
    ]


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
    cells = {}
    for name in real_datasets(cfg):
        dataset_ns = real["datasets"][name].get("n", ns)  # a data set may run a subset of n (BreastMNIST: no 1000)
        wanted = [(seed, n, list(etas)) for seed in seeds for n in dataset_ns]
        if sweep:
            wanted.append((sweep["seed"], sweep["n"], sweep_etas))
        for seed, n, cell_etas in wanted:
            job = f"{name}_s{seed}_n{n}"
            cell = cells.setdefault(job, {"dataset": name, "seed": seed, "n": n, "etas": []})
            cell["etas"] = sorted(set(cell["etas"]) | {round(float(e), 6) for e in cell_etas})
    return _split_cells_to_fit(cfg, cells)


UNKNOWN_TEST_ROWS = 10000  # the estimates' test split where the config does not give its size
UNKNOWN_TRAIN_ROWS = 60000


def real_rows(cfg: dict, dataset: str, cells: dict[str, dict]) -> dict[str, int]:
    """The rows the estimates count for a data set: every training row (pooled features), the
    fine-tuning pool (final-layer inputs) and the test split."""
    entry = cfg["real"]["datasets"][dataset]
    sub = entry.get("subsample") or {}
    train = sub.get("train") or entry.get("train_size") or UNKNOWN_TRAIN_ROWS
    mine = [c for c in cells.values() if c["dataset"] == dataset]
    pool = min(train, len({c["seed"] for c in mine}) * max(c["n"] for c in mine))
    test = min(sub.get("test") or entry.get("test_size") or UNKNOWN_TEST_ROWS, entry.get("test_size") or math.inf)
    return dict(train_rows=train, hidden_rows=pool, test_rows=int(test))


def backbone_shape(cfg: dict, dataset: str) -> real_resources.BackboneShape:
    entry = cfg["real"]["datasets"][dataset]
    return real_resources.backbone_shape(cfg["real"]["backbones"][entry["backbone"]], entry["modality"])


def feature_parts(cfg: dict, cells: dict[str, dict] | None = None) -> dict[str, int]:
    """{data set: the parts its feature cache is computed in}: 1, or the fewest of 2, 4, 8, ...
    that bring one part's job within the ceilings. Refused where even one backbone batch per
    part does not fit."""
    cells = real_cells(cfg) if cells is None else cells
    cluster = resources.cluster_settings(cfg)
    out = {}
    for name in sorted({c["dataset"] for c in cells.values()}):
        shape, rows = backbone_shape(cfg, name), real_rows(cfg, name, cells)
        most = max(1, math.ceil(max(rows["train_rows"], rows["test_rows"]) / real_resources.BACKBONE_BATCH))
        parts = 1
        while not cluster.fits(real_resources.features_need(shape, **rows, device=cluster.device, parts=parts)):
            if parts == most:
                need = real_resources.features_need(shape, **rows, device=cluster.device, parts=parts)
                raise ConfigError(
                    f"real data set {name}: its features job needs {need.mem_mb} MB and {need.runtime_min} min on "
                    f"{cluster.device} even in {parts} parts of one backbone batch, above {cluster.describe()}: "
                    "raise the ceiling"
                )
            parts = min(most, parts * 2)
        out[name] = parts
    return out


def real_needs(cfg: dict, cells: dict[str, dict] | None = None) -> dict[str, dict[str, resources.Need]]:
    """What each real-data job asks for: {"features": {data set: Need of one of its parts},
    "pretrain": {data set: Need}, "train": {cell id: Need}}, on the config's device kind."""
    cells = real_cells(cfg) if cells is None else cells
    device = resources.cluster_settings(cfg).device
    protocol = cfg["real"]["protocol"]
    parts = feature_parts(cfg, cells)
    out: dict[str, dict[str, resources.Need]] = {"features": {}, "pretrain": {}, "train": {}}
    for name in {c["dataset"] for c in cells.values()}:
        entry, shape, rows = cfg["real"]["datasets"][name], backbone_shape(cfg, name), real_rows(cfg, name, cells)
        seeds = len({c["seed"] for c in cells.values() if c["dataset"] == name})
        out["features"][name] = real_resources.features_need(shape, **rows, device=device, parts=parts[name])
        out["pretrain"][name] = real_resources.pretrain_need(
            shape, len(entry["classes"]), seeds, entry["pretrain_size"], protocol["pretrain_epochs"],
            protocol["batch_size"], **rows, device=device, pooler=entry["modality"] == "text",
        )  # fmt: skip
    for job, cell in cells.items():
        rows = real_rows(cfg, cell["dataset"], cells)
        out["train"][job] = real_resources.finetune_need(
            backbone_shape(cfg, cell["dataset"]), cell["n"], len(cell["etas"]), protocol["finetune_epochs"],
            protocol["batch_size"], **rows, device=device,
            records=len(record_epochs(protocol["finetune_epochs"], protocol["record_epochs"])),
        )  # fmt: skip
    return out


def _split_cells_to_fit(cfg: dict, cells: dict[str, dict]) -> dict[str, dict]:
    """Every real-data job within the ceilings: a cell over them becomes ``<cell>-<k>`` cells of
    fewer noise rates (each eta's run is the same in any cell of its seed). A job that cannot
    be split to fit (one eta, a data set's phase 1) is refused; a data set's features are
    computed in parts (``feature_parts``)."""
    cluster = resources.cluster_settings(cfg)
    if (cluster.max_mem_mb is None and cluster.max_runtime_min is None) or not cells:
        return cells
    needs = real_needs(cfg, cells)
    for rule in ("pretrain",):
        for name, need in needs[rule].items():
            if not cluster.fits(need):
                raise ConfigError(
                    f"real data set {name}: its {rule} job needs {need.mem_mb} MB and {need.runtime_min} min on "
                    f"{cluster.device}, above {cluster.describe()}: raise the ceiling or shrink the data set"
                )
    out = {}
    for job, cell in cells.items():
        parts, etas = [], list(cell["etas"])
        while etas:
            take = len(etas)
            while take and not cluster.fits(real_needs(cfg, {job: {**cell, "etas": etas[:take]}})["train"][job]):
                take -= 1
            if not take:
                need = real_needs(cfg, {job: {**cell, "etas": etas[:1]}})["train"][job]
                raise ConfigError(
                    f"real-data job {job}: one run (n {cell['n']}, eta {etas[0]}, seed {cell['seed']}) needs "
                    f"{need.mem_mb} MB and {need.runtime_min} min on {cluster.device}, above {cluster.describe()}"
                )
            parts.append(etas[:take])
            etas = etas[take:]
        if len(parts) == 1:
            out[job] = cell
        else:
            out.update({f"{job}-{k}": {**cell, "etas": part} for k, part in enumerate(parts)})
    return out


def real_datasets(cfg: dict) -> list[str]:
    """The data sets a run uses: ``real.use`` picks from the catalogue ``real.datasets``."""
    return list((cfg.get("real") or {}).get("use", []))


def real_feature_rows(cells: dict, dataset: str) -> tuple[int, list[int]]:
    """(largest n, every seed) that fine-tune on a data set, of the planned ``cells``
    (:func:`real_cells`): the rows its feature cache keeps."""
    mine = [c for c in cells.values() if c["dataset"] == dataset]
    return max(c["n"] for c in mine), sorted({c["seed"] for c in mine})


def max_margin_runs(config: dict) -> dict[str, list[dict]]:
    """The runs of the attention-SVM check (``max_margin``, benign.synthetic.max_margin_alignment), per model: the W-fixed model at the named
    settings and along the SNR sweep, the paper's model at the named settings (its own seeds);
    n, T, rho, eta, sigma and lr from the synthetic defaults."""
    cfg = config.get("max_margin")
    if not cfg:
        return {}
    defaults = config["synthetic"]["defaults"]
    # the defaults' test set: the long-time label reads it (the training set is drawn before it, so
    # the alignment's numbers do not depend on its size)
    base = {**{k: defaults[k] for k in spec.DEFAULT_KEYS}, **{k: None for k in spec.MODEL_KEYS}}
    named = [(name, s["d"], s["signal_norm"]) for name, s in cfg["settings"].items()]
    sweep = cfg.get("snr_sweep")
    plans = {cfg["model"]: (named + [(f"snr_{m:g}", sweep["d"], m) for m in sweep["signal_norm"]] if sweep else named,
                            cfg["seeds"])}  # fmt: skip
    if cfg.get("paper_model") not in (None, "null"):
        plans[cfg["paper_model"]] = (named, cfg.get("paper_seeds") or cfg["seeds"])
    runs = {
        model: [
            dict(
                base, model=model, setting=name, d=int(d), signal_norm=float(m), seed=int(seed), steps=int(cfg["steps"])
            )
            for name, d, m in points
            for seed in seeds
        ]
        for model, (points, seeds) in plans.items()
    }
    return runs
