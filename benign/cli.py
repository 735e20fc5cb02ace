"""Command line: train one synthetic run and print its final metrics, or ask the fitted regime
model which regime a setting falls in.

python -m benign synthetic --model token --d 2000 --signal-norm 20 --json
python -m benign synthetic --engine gram --d 10000000 --signal-norm 200 --steps 10000 --json
python -m benign regime --d 1800 --n 12 --signal-norm 20 [--steps 10000]
python -m benign forecast [--configfile config/full.yaml] [--cores 2] [--all]
"""

from __future__ import annotations

import argparse
import json
import sys

from benign.core import paths
from benign.plan import ConfigError
from benign.plan.validate import check_run
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
            reals = spec.REALS + spec.OPTIONAL_REALS
            kind = dict(type=int) if f.name in spec.INTEGERS else dict(type=float) if f.name in reals else {}
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
    art = sub.add_parser("artifacts", help="print the artifact index (benign/artifacts/)")
    art.add_argument("--write", action="store_true", help="write it into README.md and docs/artifacts.md")
    env = sub.add_parser("env", help="print the rules' conda environment, written from the requirement files")
    env.add_argument("--write", action="store_true", help="write it to workflow/envs/ (benign/plan/environment.py)")
    fc = sub.add_parser("forecast", help="what a run will cost: its jobs' core time (benign/plan/forecast.py)")
    fc.add_argument("--configfile", nargs="*", default=[],
                    help="config files merged over config/config.yaml, as snakemake --configfile")  # fmt: skip
    fc.add_argument(
        "--cores", type=int, default=None, help="the wall time on that many cores (default: core time only)"
    )
    fc.add_argument("--all", action="store_true", help="every job, as from a fresh clone (default: those not yet run)")
    sch = sub.add_parser("schema", help="print the config schema, generated (benign/plan/schema.py)")
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
    if out["design"]["warning"]:
        print(f"benign: warning: {out['design']['warning']}", file=sys.stderr)
    if args.json:
        print(json.dumps(out))
        return 0
    flow = f", the flow at tolerance {out['flow_tol']:g}" if out["integrator"] == "flow" else ""
    lr = f" at lr {out['lr']:.4g} (step size {out['step_size']:g}, time {out['time']:g}{flow})" if out["lr"] else ""
    print(f"d = {args.d:g}, n = {args.n:g}, ||mu|| = {args.signal_norm:g}, after {out['horizon']} steps{lr}:")
    for regime, (p, low, high) in out["regimes"].items():
        print(f"  {regime:>16}: {p:.3f} [{low:.3f}, {high:.3f}]")
    for name, (star, low, high) in out["boundaries"].items():
        print(f"  {name} boundary: ||mu||* = {star:.3g} [{low:.3g}, {high:.3g}]")
    return 0


def _artifacts(args) -> int:
    """The artifact index, printed or written into the files that hold it."""
    from pathlib import Path

    from benign.artifacts import table as artifacts

    if not args.write:
        print(artifacts.index(), end="")
        return 0
    for name in artifacts.INDEXED:
        path = Path(name)
        path.write_text(artifacts.with_index(path.read_text()))
        print(f"wrote the artifact index into {path}")
    return 0


def _env(args) -> int:
    """The rules' conda environment and its post-deploy script, from the requirement files."""
    from benign.plan import environment

    if not args.write:
        print(environment.env_text() + "\n" + environment.post_deploy_text(), end="")
        return 0
    print("wrote " + ", ".join(str(p) for p in environment.write()))
    return 0


def _forecast(args) -> int:
    """The forecast of a run from this directory: its jobs' core time, before it starts."""
    import contextlib
    import os
    import tempfile
    from pathlib import Path

    import yaml
    from snakemake.utils import update_config

    from benign.workplan import WorkPlan

    config = yaml.safe_load(Path("config/config.yaml").read_text())
    for name in args.configfile:
        update_config(config, yaml.safe_load(Path(name).read_text()) or {})
    try:
        work = WorkPlan.load(config, "workflow/schemas/config.schema.yaml")
    except ConfigError as err:
        print(f"benign: invalid configuration: {err}", file=sys.stderr)
        return 2
    here = Path.cwd()
    with tempfile.TemporaryDirectory() if args.all else contextlib.nullcontext(here) as where:
        os.chdir(where)  # --all: where nothing has run yet
        try:
            print(work.forecast().text(args.cores))
        finally:
            os.chdir(here)
    return 0


def _schema(args) -> int:
    """The config schema, generated from its hand-written source, the run spec and the registry;
    printed, or written where the workflow reads it."""
    from benign.plan import schema

    if not args.write:
        print(schema.text(), end="")
        return 0
    print(f"wrote the config schema to {schema.write()}")
    return 0


def check_memory(run: dict, device: str | None) -> None:
    """Refuse a run whose estimated peak memory (benign.plan.resources) exceeds this machine's."""
    import os

    from benign.plan import resources

    kind = "cuda" if (device or "").startswith("cuda") else "cpu"
    need = resources.synthetic_job_need([{**run, "engine": spec.resolve_engine(run)}], kind).mem_mb
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
    if args.command == "forecast":
        return _forecast(args)
    if args.command == "env":
        return _env(args)
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
    from benign.plan.schema import default
    from benign.synthetic.schema import REFERENCES, SELECTION
    from benign.synthetic.trainer import train_runs

    runs, _, _ = train_runs([spec.RunSpec(**run)], device=args.device)
    runs = assign_regimes(runs, Criteria(**default("synthetic.regime")))  # the config's default thresholds
    row = runs.iloc[0].to_dict()
    keys = [*spec.NUMBERS,
        "train_loss", "test_loss", "train_acc", "test_acc", "train_acc_clean", "train_acc_noisy",
        *(name for name, _ in SELECTION + REFERENCES),
        "n_noisy", "iterations", "snr", "regime", "head_acc_regime", "status", "wall_time_s", "device",
    ]  # fmt: skip
    out = {k: (None if row[k] != row[k] else row[k]) for k in keys if k in row}
    out = {k: (v.item() if hasattr(v, "item") else v) for k, v in out.items()}
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:>16}: {v}")
    return 0
