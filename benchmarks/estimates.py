"""Each training job's estimate (benign/plan/resources.py) against what it used in a finished run.

Reads the per-job runs tables of a finished reproduction (their ``peak_rss_mb`` and
``wall_time_s``) and the config it ran, recomputes every training job's request, and writes
benchmarks/results/estimates.json: per job the estimated and the measured memory and time, and
whether the memory estimate holds (at least the measured peak, at most twice it).

Run, after `snakemake --cores all` in a clone:
    python benchmarks/estimates.py --repo /path/to/that/clone [--configfile config/config.yaml]
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import yaml

from benign.core import paths
from benign.core.io import write_json
from benign.plan import jobs as plan
from benign.plan import real_resources, resources
from benign.plan.load import read

ROOT = Path(__file__).resolve().parent.parent


def merged(base: dict, extra: dict) -> dict:
    """A config file over another, as Snakemake merges --configfile: mappings key by key."""
    out = dict(base)
    for key, value in extra.items():
        out[key] = merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def measured(table: Path) -> tuple[float, float]:
    """(peak RSS MB, wall seconds) of the job that wrote ``table``: a runs table (a row per run,
    its share of the wall time) or an alignment table (a row per logged step, each with its
    batch's wall time)."""
    names = pq.read_schema(table).names
    if "step" in names:
        rows = pd.read_parquet(table, columns=["d", "seed", "steps", "peak_rss_mb", "wall_time_s"])
        return float(rows["peak_rss_mb"].max()), float(
            rows.groupby(["d", "seed", "steps"])["wall_time_s"].first().sum()
        )
    runs = pd.read_parquet(table, columns=["peak_rss_mb", "wall_time_s"])
    return float(runs["peak_rss_mb"].max()), float(runs["wall_time_s"].sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", type=Path, default=ROOT, help="a clone where the reproduction has finished")
    parser.add_argument("--configfile", action="append", default=[], help="config files it ran (default: the default)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "estimates.json")
    args = parser.parse_args()
    cfg = yaml.safe_load((args.repo / "config" / "config.yaml").read_text())
    for extra in args.configfile:
        cfg = merged(cfg, yaml.safe_load((args.repo / extra).read_text()))
    config = read(cfg, args.repo / "workflow" / "schemas" / "config.schema.yaml")
    device = config.cluster.device
    jobs = []
    for job, runs in plan.synthetic_jobs(config).items():
        need = resources.synthetic_job_need(runs, device)
        jobs.append(("train_synthetic", job, need, args.repo / paths.fill(paths.SYNTHETIC_JOB, job=job, table="runs")))
    for job, need in real_resources.job_needs(config, plan.real_cells(config))["train"].items():
        jobs.append(("train_real", job, need, args.repo / paths.fill(paths.REAL_JOB, cell=job, table="runs")))
    for model, runs in plan.max_margin_runs(config).items():
        need = resources.synthetic_job_need(runs, device)
        jobs.append(("train_max_margin", model, need, args.repo / paths.fill(paths.MAX_MARGIN, max_margin_model=model)))
    rows = []
    for rule, job, need, table in jobs:
        if not table.exists():
            continue
        peak, wall = measured(table)
        rows.append(
            dict(
                rule=rule,
                job=job,
                estimated_mem_mb=need.mem_mb,
                peak_rss_mb=round(peak, 1),
                mem_ratio=round(need.mem_mb / peak, 3),
                estimated_runtime_min=need.runtime_min,
                wall_min=round(wall / 60, 2),
                holds=peak <= need.mem_mb <= 2 * peak,
            )  # fmt: skip
        )
    frame = pd.DataFrame(rows)
    result = {
        "description": "training jobs' memory and time requests against the peaks and wall times they measured",
        "repo": str(args.repo),
        "jobs_compared": len(rows),
        "jobs_missing_tables": len(jobs) - len(rows),
        "memory_estimate_holds": int(frame["holds"].sum()) if rows else 0,
        "mem_ratio_min": float(frame["mem_ratio"].min()) if rows else None,
        "mem_ratio_max": float(frame["mem_ratio"].max()) if rows else None,
        "runtime_ratio_min": float((frame["estimated_runtime_min"] / frame["wall_min"].clip(lower=1 / 60)).min())
        if rows
        else None,
        "python": platform.python_version(),
        "jobs": rows,
    }
    write_json(args.out, result)
    print(json.dumps({k: v for k, v in result.items() if k != "jobs"}, indent=2))


if __name__ == "__main__":
    main()
