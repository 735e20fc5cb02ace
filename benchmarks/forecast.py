"""The forecast a run prints before it starts (benign/plan/forecast.py) against what its jobs took.

Reads a finished reproduction: its config, its refinement plan and every training job's runs
table (``wall_time_s``, each run's share of its job), and writes benchmarks/results/forecast.json:
per part and per half the forecast core time (with the refinement estimated, as printed at the
start, and as planned) beside the measured one, their ratio, and whether each half lies within
1.5x. The CPU and the reproduction's own wall time (give it with --wall-min) go beside them.

Run, after `snakemake --cores all` in a clone:
    python benchmarks/forecast.py --repo /path/to/that/clone [--configfile config/full.yaml] [--wall-min 41.5]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
from pathlib import Path

import yaml
from snakemake.utils import update_config

from benign.core import job_time, paths
from benign.core.io import write_json
from benign.plan.forecast import REAL, SYNTHETIC
from benign.workplan import WorkPlan

ROOT = Path(__file__).resolve().parent.parent
WITHIN = 1.5  # the forecast's target: each half within this factor of the measured time


def _cpu() -> str:
    info = Path("/proc/cpuinfo")
    text = info.read_text() if info.exists() else ""
    name = next((ln.split(":", 1)[1].strip() for ln in text.splitlines() if ln.startswith("model name")), "")
    flags = next((ln.split(":", 1)[1].split() for ln in text.splitlines() if ln.startswith("flags")), [])
    return f"{name or platform.machine()} with {'AVX-512' if 'avx512f' in flags else 'AVX2' if 'avx2' in flags else 'no AVX2'}"


def measured(repo: Path) -> dict[str, float]:
    """{part: seconds} the training jobs of a finished run took, named as the forecast names its parts."""
    templates = (paths.SYNTHETIC_JOB, paths.REFINEMENT_JOB, paths.REAL_JOB)
    folders = [Path(paths.fill(t, job="*", rjob="*", cell="*", table="runs")).parent.parent for t in templates]
    files = [table for folder in folders for table in sorted((repo / folder).glob("*/runs.parquet"))]
    return {part: seconds for part, (_, seconds) in job_time.measured(files).items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", type=Path, default=ROOT, help="a clone where the reproduction has finished")
    parser.add_argument("--configfile", action="append", default=[], help="config files it ran (default: the default)")
    parser.add_argument("--wall-min", type=float, default=None, help="the reproduction's wall time, minutes")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "forecast.json")
    args = parser.parse_args()
    repo = args.repo.resolve()
    cfg = yaml.safe_load((repo / "config" / "config.yaml").read_text())
    for extra in args.configfile:
        update_config(cfg, yaml.safe_load((repo / extra).read_text()) or {})
    work = WorkPlan.load(cfg, repo / "workflow" / "schemas" / "config.schema.yaml")
    here = Path.cwd()
    os.chdir(repo)  # the refinement's plan, where the run wrote it
    try:
        planned = work.forecast(every=True)
    finally:
        os.chdir(here)
    with tempfile.TemporaryDirectory() as empty:  # where no refinement plan is: estimated, as at the start
        os.chdir(empty)
        try:
            estimated = work.forecast(every=True)
        finally:
            os.chdir(here)
    took = measured(repo)
    parts = []
    for part, (half, seconds) in sorted(planned.parts.items(), key=lambda kv: -kv[1][1]):
        if part in took:
            before = estimated.parts.get(part, (half, seconds))[1]
            parts.append(dict(part=part, half=half, forecast_min=round(seconds / 60, 2),
                              forecast_at_start_min=round(before / 60, 2), measured_min=round(took[part] / 60, 2),
                              ratio=round(took[part] / seconds, 3) if seconds else None))  # fmt: skip
    halves = {}
    for half in (SYNTHETIC, REAL):
        rows = [p for p in parts if p["half"] == half]
        fc, at_start, meas = (
            sum(p[k] for p in rows) for k in ("forecast_min", "forecast_at_start_min", "measured_min")
        )
        halves[half] = dict(forecast_min=round(fc, 1), forecast_at_start_min=round(at_start, 1),
                            measured_min=round(meas, 1), ratio=round(meas / fc, 3) if fc else None,
                            within=bool(fc and 1 / WITHIN <= meas / fc <= WITHIN),
                            within_at_start=bool(at_start and 1 / WITHIN <= meas / at_start <= WITHIN))  # fmt: skip
    result = {
        "description": "the forecast printed before a run (benign/plan/forecast.py) against its training jobs' time",
        "repo": str(repo),
        "cpu": _cpu(),
        "cores": os.cpu_count(),
        "wall_min": args.wall_min,
        "forecast_wall_min_at_start": round(estimated.total() / 60 / (os.cpu_count() or 1), 1),
        "within": WITHIN,
        "halves": halves,
        "parts": parts,
    }
    write_json(args.out, result)
    print(json.dumps({k: v for k, v in result.items() if k != "parts"}, indent=2))


if __name__ == "__main__":
    main()
