"""Run the benchmark suite: each benchmark in its own process (so peak memory is its own),
our implementation and the plain reference on the same inputs, results to JSON.

    .venv/bin/python -m benchmarks                      # the whole suite, 1 torch thread
    .venv/bin/python -m benchmarks --only token_single  # one benchmark (repeatable)
    .venv/bin/python -m benchmarks --quick              # small sizes: checks that everything runs

Results: benchmarks/results/<name>.json (--quick: benchmarks/results/quick/), then the table
in benchmarks/README.md is regenerated from them (benchmarks/render.py).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

from benchmarks.common import BY_CPU, RESULTS, ROOT, cpu_kind

# name -> (module, function); the order they run in.
BENCHMARKS = {
    "token_single": ("benchmarks.bench_token", "token_single"),
    "token_row": ("benchmarks.bench_token", "token_row"),
    "token_grid": ("benchmarks.bench_token", "token_grid"),
    "atlas": ("benchmarks.bench_token", "atlas"),
    "encoder_500": ("benchmarks.bench_encoder", "encoder_500"),
    "encoder_2000": ("benchmarks.bench_encoder", "encoder_2000"),
    "encoder_grid": ("benchmarks.bench_encoder", "encoder_grid"),
    "encoder_defer": ("benchmarks.bench_encoder", "encoder_defer"),
    "real_phase2": ("benchmarks.bench_other", "real_phase2"),
    "real_flops": ("benchmarks.bench_real_flops", "real_flops"),
    "dry_run": ("benchmarks.bench_other", "dry_run"),
    "gram_scale": ("benchmarks.bench_gram", "gram_scale"),
    "gram_setup": ("benchmarks.bench_gram", "gram_setup"),
    "gram_step": ("benchmarks.bench_gram", "gram_step"),
    "flow_batch": ("benchmarks.bench_gram", "flow_batch"),
    "w_dtype": ("benchmarks.bench_gram", "w_dtype"),
}
# The encoder grid at the paper's settings is hours of CPU time: it runs by default only on CUDA
# (and in --quick, at toy sizes); ask for it with --only encoder_grid. encoder_defer measures a
# CUDA-only choice.
CUDA_ONLY = {"encoder_grid", "encoder_defer"}
# The CPU's own costs, kept per CPU kind (results/cpu/<kind>/): the machine changes from one run
# to the next, and a speed measured on one kind is not another's (benchmarks/README.md#per-cpu-kind).
PER_KIND = {"gram_step", "flow_batch", "atlas", "w_dtype"}


def parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    p.add_argument("--only", action="append", default=[], metavar="NAME", help=f"one of {', '.join(BENCHMARKS)}")
    p.add_argument("--quick", action="store_true", help="small sizes, results under results/quick/")
    p.add_argument("--threads", type=int, default=1, help="torch threads in each benchmark process (default 1)")
    p.add_argument("--device", default="auto", help="auto (CUDA if available), cpu or cuda")
    p.add_argument("--out", type=Path, default=None, help="results folder (default benchmarks/results[/quick])")
    p.add_argument("--budget-s", type=float, default=0, help="encoder_grid: stop after about this long, price the rest")
    p.add_argument("--no-render", action="store_true", help="do not regenerate the README table")
    p.add_argument("--child", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def _device(name: str):
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def child(args: argparse.Namespace) -> int:
    """Run one benchmark in this process and write its JSON."""
    import importlib

    import torch

    from benchmarks.common import Context, Skip, machine, peak_memory, write_result

    torch.set_num_threads(args.threads)
    ctx = Context(device=_device(args.device), threads=args.threads, quick=args.quick, out=args.out,
                  extra={"budget_s": args.budget_s})  # fmt: skip
    module, func = BENCHMARKS[args.child]
    started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    start = time.perf_counter()
    try:
        result = getattr(importlib.import_module(module), func)(ctx)
    except (ImportError, Skip) as err:  # a missing optional dependency or asset: say so, do not fail
        result = {"skipped": f"{type(err).__name__}: {err}"}
        print(f"{args.child}: skipped ({result['skipped']})", flush=True)
    out = {
        "name": args.child,
        "quick": args.quick,
        **result,
        "machine": machine(ctx),
        "peak_memory": peak_memory(ctx),
        "started_utc": started,
        "benchmark_wall_s": round(time.perf_counter() - start, 1),
    }
    write_result(args.out / f"{args.child}.json", out)
    if args.child in PER_KIND and not args.quick and not ctx.cuda and not result.get("skipped"):
        write_result(BY_CPU / cpu_kind(out["machine"]) / f"{args.child}.json", out)
    return 0


def summary(path: Path) -> str:
    r = json.loads(path.read_text())
    if r.get("skipped"):
        return f"{r['name']:14s} skipped: {r['skipped']}"
    ratio = f"ratio {r['ratio']:.1f}x" if r.get("ratio") else ""
    tgt = r.get("target")
    tgt = (
        f"target {tgt['metric']} {tgt['op']} {tgt['value']}: {'met' if tgt['met'] else 'MISSED'} ({tgt['measured']})"
        if tgt
        else ""
    )
    return f"{r['name']:14s} {ratio:16s} {tgt}  peak RSS {r['peak_memory']['ru_maxrss_mb']:.0f} MB  ({r['benchmark_wall_s']:.0f} s)"


def main(argv=None) -> int:
    args = parse(argv)
    if args.out is None:
        args.out = RESULTS / "quick" if args.quick else RESULTS
    args.out = args.out.resolve()
    if args.child:
        return child(args)
    names = []
    for item in args.only:
        names += [n.strip() for n in item.split(",") if n.strip()]
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        sys.exit(f"unknown benchmark(s) {unknown}; known: {list(BENCHMARKS)}")
    if not names:
        cuda = _device(args.device).type == "cuda"
        names = [n for n in BENCHMARKS if n not in CUDA_ONLY or cuda or args.quick]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    env.update(OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads))
    failed = []
    for name in names:
        cmd = [sys.executable, "-m", "benchmarks.run", "--child", name, "--threads", str(args.threads),
               "--device", args.device, "--out", str(args.out), "--budget-s", str(args.budget_s)]  # fmt: skip
        if args.quick:
            cmd.append("--quick")
        print(f"[{dt.datetime.now():%H:%M:%S}] {name} ...", flush=True)
        proc = subprocess.run(cmd, cwd=ROOT, env=env)
        if proc.returncode != 0:
            failed.append(name)
            print(f"{name}: FAILED (exit {proc.returncode})", flush=True)
            continue
        print("  " + summary(args.out / f"{name}.json"), flush=True)
    if not args.no_render:
        try:
            from benchmarks.render import render_readme

            render_readme()
        except Exception:  # the results are written; a table problem must not hide them
            traceback.print_exc()
    if failed:
        print(f"failed: {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
