"""Command line: train one synthetic run and print its final metrics.

python -m benign synthetic --model token --d 2000 --signal-norm 20 --json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

from benign import registry
from benign.config import ConfigError
from benign.config.validate import check_run

LOGGING = ("setting", "log_every", "log_points", "record_attention")  # RunSpec fields that change no number


def _parser() -> argparse.ArgumentParser:
    from benign.trainer import RunSpec

    defaults = RunSpec()
    parser = argparse.ArgumentParser(
        prog="benign", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    syn = sub.add_parser("synthetic", help="train one synthetic run (paper defaults for every flag not given)")
    syn.add_argument("--model", choices=list(registry.MODELS), default="token",
                     help="; ".join(f"{m.name}: {m.label}" for m in registry.MODELS.values()))  # fmt: skip
    for name, typ in (("n", int), ("T", int), ("d", int), ("rho", float), ("signal_norm", float), ("eta", float),
                      ("sigma", float), ("n_test", int), ("lr", float), ("steps", int), ("seed", int)):  # fmt: skip
        syn.add_argument(f"--{name.replace('_', '-')}", dest=name, type=typ, default=getattr(defaults, name))
    syn.add_argument(
        "--mlp-dim", dest="mlp_dim", type=int, default=2000, help="encoder MLP width (encoder only)"
    )  # its run key
    syn.add_argument("--device", default=None, help="cpu, cuda, cuda:1, mps (default: best available)")
    syn.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    run = {k: v for k, v in vars(args).items() if k not in ("command", "device", "json")}
    for key in ("mlp_dim",):  # the models' own run keys (benign.registry), for the models that have them
        if key not in registry.MODELS[run["model"]].run_keys:
            run[key] = None
    try:
        check_run(run, "option")
    except ConfigError as err:
        print(f"benign: invalid {err}".replace("option.", "--").replace("_", "-"), file=sys.stderr)
        return 2
    from benign.theory import assign_regimes
    from benign.trainer import RunSpec, train_runs

    runs, _, _ = train_runs([RunSpec(**run)], device=args.device)
    runs = assign_regimes(runs)
    row = runs.iloc[0].to_dict()
    keys = [f.name for f in dataclasses.fields(RunSpec) if f.name not in LOGGING] + [
        "train_loss", "test_loss", "train_acc", "test_acc", "train_acc_clean", "train_acc_noisy",
        "n_noisy", "snr", "regime", "status", "wall_time_s", "device",
    ]  # fmt: skip
    out = {k: (None if row[k] != row[k] else row[k]) for k in keys if k in row}
    out = {k: (v.item() if hasattr(v, "item") else v) for k, v in out.items()}
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:>16}: {v}")
    return 0
