"""Command line: train one synthetic run and print its final metrics, or ask the fitted regime
model which regime a setting falls in.

python -m benign synthetic --model token --d 2000 --signal-norm 20 --json
python -m benign synthetic --engine gram --d 10000000 --signal-norm 200 --steps 10000 --json
python -m benign regime --d 1800 --n 12 --signal-norm 20 [--steps 10000]
"""

from __future__ import annotations

import argparse
import json
import sys

from benign.config import ConfigError
from benign.config.validate import check_run
from benign.core import paths
from benign.synthetic import registry, spec


def _parser() -> argparse.ArgumentParser:
    defaults = spec.RunSpec()
    parser = argparse.ArgumentParser(
        prog="benign", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    syn = sub.add_parser("synthetic", help="train one synthetic run (paper defaults for every flag not given)")
    syn.add_argument("--model", choices=list(registry.MODELS), default="token",
                     help="; ".join(f"{m.name}: {m.label}" for m in registry.MODELS.values()))  # fmt: skip
    for f in spec.FIELDS:  # every parameter that changes the numbers (benign.synthetic.spec)
        if f.name in spec.NUMBERS and f.name != "model":
            own = [m.name for m in registry.MODELS.values() if f.name in m.run_keys]
            default = registry.MODELS[own[0]].run_keys[f.name]["default"] if own else getattr(defaults, f.name)
            help = f.metadata["help"] + (f" ({', '.join(own)} only)" if own else "")
            kind = dict(type=int) if f.name in spec.INTEGERS else dict(type=float) if f.name in spec.REALS else {}
            if "enum" in f.metadata["schema"]:
                kind = dict(choices=f.metadata["schema"]["enum"])
            syn.add_argument(f"--{f.name.replace('_', '-')}", dest=f.name, default=default, help=help, **kind)
    syn.add_argument("--device", default=None, help="cpu, cuda, cuda:1, mps (default: best available)")
    syn.add_argument("--json", action="store_true", help="print one JSON object")
    reg = sub.add_parser("regime", help="P(regime) at a setting, from the fitted regime model of a reproduction")
    reg.add_argument("--d", type=float, required=True)
    reg.add_argument("--n", type=float, required=True)
    reg.add_argument("--signal-norm", dest="signal_norm", type=float, required=True)
    reg.add_argument("--steps", type=int, default=None, help="a fitted horizon (default: the longest)")
    reg.add_argument("--model-table", default=paths.fill(paths.ARTIFACT, kind="table", stem="regime_model", ext=".csv"),
                     help="the fitted model (rule table_regime_boundaries writes it)")  # fmt: skip
    reg.add_argument("--json", action="store_true", help="print one JSON object")
    lt = sub.add_parser("lr-time", help="the time-scale check: a sweep's runs at (lr, t) against (k lr, t / k)")
    lt.add_argument(
        "--configfile", nargs="+", default=["config/config.yaml"], help="merged in order, as Snakemake does"
    )
    lt.add_argument("--sweep", default="atlas", help="a sweep of the token model (default: atlas)")
    lt.add_argument("--factors", type=int, nargs="+", default=[2, 5, 10])
    lt.add_argument("--workers", type=int, default=None, help="processes (default: one per CPU)")
    lt.add_argument(
        "--out",
        default=paths.fill(paths.ARTIFACT, kind="table", stem="lr_time", ext=""),
        help="file stem of the table (.csv and .md)",
    )
    art = sub.add_parser("artifacts", help="print the artifact index (benign/config/artifacts.py)")
    art.add_argument("--write", action="store_true", help="write it into README.md and docs/artifacts.md")
    sch = sub.add_parser("schema", help="print the config schema, generated (benign/config/schema.py)")
    sch.add_argument("--write", action="store_true", help="write it to workflow/schemas/config.schema.yaml")
    return parser


def _regime(args) -> int:
    """The regime predictor (benign.analysis.predictor)."""
    from pathlib import Path

    import pandas as pd

    from benign.analysis.predictor import OutsideModel, predict

    path = Path(args.model_table)
    if not path.is_file():
        print(
            f"benign: no fitted regime model at {path} (run the reproduction, or give --model-table)", file=sys.stderr
        )
        return 2
    try:
        out = predict(pd.read_csv(path), args.d, args.n, args.signal_norm, args.steps)
    except OutsideModel as err:
        print(f"benign: {err}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"d = {args.d:g}, n = {args.n:g}, ||mu|| = {args.signal_norm:g}, after {out['horizon']} steps:")
    for regime, (p, low, high) in out["regimes"].items():
        print(f"  {regime:>16}: {p:.3f} [{low:.3f}, {high:.3f}]")
    for name, (star, low, high) in out["boundaries"].items():
        print(f"  {name} boundary: ||mu||* = {star:.3g} [{low:.3g}, {high:.3g}]")
    return 0


def _lr_time(args) -> int:
    """Train a sweep's runs at (lr, t) and at (k lr, t / k), compare their labels, write the table."""
    import logging
    import os
    from concurrent.futures import ProcessPoolExecutor
    from pathlib import Path

    import yaml
    from snakemake.utils import update_config

    from benign.analysis.theory import Criteria
    from benign.analysis.time_scale import compare, scaled
    from benign.config import plan, schema
    from benign.config.load import load
    from benign.tables.lr_time import lr_time

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    cfg: dict = {}
    for path in args.configfile:
        update_config(cfg, yaml.safe_load(Path(path).read_text()))
    try:
        load(cfg, schema.PATH)
        sweep = cfg["synthetic"]["token"]["sweeps"][args.sweep]
    except (ConfigError, KeyError) as err:
        print(f"benign: invalid configuration: {err}", file=sys.stderr)
        return 2
    base = plan.sweep_runs("token", args.sweep, sweep, plan.base_run(cfg, "token"))
    runs = {1: base, **{k: [scaled(run, k) for run in base] for k in args.factors}}
    specs = [spec.RunSpec(**run) for group in runs.values() for run in group]
    workers = args.workers or os.cpu_count() or 1
    chunks = [specs[i::workers] for i in range(workers)]
    with ProcessPoolExecutor(workers) as pool:
        frames = list(pool.map(_train_finals, chunks))
    import pandas as pd

    finals = pd.concat(frames, ignore_index=True)
    by_k = {k: finals[finals["setting"] == group[0]["setting"]] for k, group in runs.items()}
    table = compare(by_k.pop(1), by_k, Criteria(**cfg["synthetic"]["regime"]))
    lr_time(table, args.out, args.sweep, base[0]["lr"], base[0]["steps"])
    print(Path(f"{args.out}.md").read_text())
    return 0


def _train_finals(specs):
    """The runs table of ``specs``, trained at one torch thread (one process per CPU)."""
    import torch

    from benign.synthetic.trainer import train_runs

    torch.set_num_threads(1)
    return train_runs(specs, device="cpu")[0] if specs else None


def _artifacts(args) -> int:
    """The artifact index, printed or written into the files that hold it."""
    from pathlib import Path

    from benign.config import artifacts

    if not args.write:
        print(artifacts.index(), end="")
        return 0
    for name in artifacts.INDEXED:
        path = Path(name)
        path.write_text(artifacts.with_index(path.read_text()))
        print(f"wrote the artifact index into {path}")
    return 0


def _schema(args) -> int:
    """The config schema, generated from its hand-written source, the run spec and the registry;
    printed, or written where the workflow reads it."""
    from benign.config import schema

    if not args.write:
        print(schema.text(), end="")
        return 0
    print(f"wrote the config schema to {schema.write()}")
    return 0


def check_memory(run: dict, device: str | None) -> None:
    """Refuse a run whose estimated peak memory (benign.config.resources) exceeds this machine's."""
    import os

    from benign.config import resources

    kind = "cuda" if (device or "").startswith("cuda") else "cpu"
    need = resources.synthetic_job_need([run], kind).mem_mb
    have = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    if need > have:
        gram = (
            " (or --engine gram, whose cost does not depend on d)"
            if "gram" in registry.MODELS[run["model"]].engines
            else ""
        )
        raise ConfigError(
            f"option.d = {run['d']}: the {spec.resolve_engine(run)} engine would need about {need} MB, more than this "
            f"machine's {have} MB; choose a smaller d{gram}"
        )


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "regime":
        return _regime(args)
    if args.command == "artifacts":
        return _artifacts(args)
    if args.command == "schema":
        return _schema(args)
    if args.command == "lr-time":
        return _lr_time(args)
    run = {k: v for k, v in vars(args).items() if k not in ("command", "device", "json")}
    for key in spec.MODEL_KEYS:  # the models' own run keys (benign.synthetic.registry), for the models that have them
        if key not in registry.MODELS[run["model"]].run_keys:
            run[key] = None
    try:
        check_run(run, "option")
        check_memory(run, args.device)
    except ConfigError as err:
        print(f"benign: invalid {err}".replace("option.", "--").replace("_", "-"), file=sys.stderr)
        return 2
    from benign.analysis.theory import Criteria, assign_regimes
    from benign.config.schema import default
    from benign.synthetic.schema import REFERENCES, SELECTION
    from benign.synthetic.trainer import train_runs

    runs, _, _ = train_runs([spec.RunSpec(**run)], device=args.device)
    runs = assign_regimes(runs, Criteria(**default("synthetic.regime")))  # the config's default thresholds
    row = runs.iloc[0].to_dict()
    keys = [*spec.NUMBERS,
        "train_loss", "test_loss", "train_acc", "test_acc", "train_acc_clean", "train_acc_noisy",
        *(name for name, _ in SELECTION + REFERENCES),
        "n_noisy", "snr", "regime", "head_acc_regime", "status", "wall_time_s", "device",
    ]  # fmt: skip
    out = {k: (None if row[k] != row[k] else row[k]) for k in keys if k in row}
    out = {k: (v.item() if hasattr(v, "item") else v) for k, v in out.items()}
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:>16}: {v}")
    return 0
