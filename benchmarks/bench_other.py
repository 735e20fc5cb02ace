"""The real-data phase-2 benchmark (benchmarks/real_phase2.py) and the workflow dry-run timings."""

from __future__ import annotations

import json
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import ROOT, Context, Skip, target


def real_phase2(ctx: Context) -> dict:
    """One phase-2 cell (n=200) on the offline MiniLM backbone, cached position-0 final layer
    versus the full forward, per epoch; and R runs of the cell as one program, per run-epoch. Runs the real-data script benchmarks/real_phase2.py
    in this process and adopts its JSON."""
    try:
        import transformers  # noqa: F401

        from benchmarks import real_phase2 as script
    except ImportError as err:
        raise Skip(f"the real-data stack is not installed ({err})") from None

    out = ctx.out / "real_phase2.script.json"
    argv = ["real_phase2.py", "--threads", str(ctx.threads), "--out", str(out)]
    if ctx.quick:
        argv += ["--n", "32", "--cached-epochs", "3", "--full-epochs", "1", "--batch-runs", "2"]
    saved = sys.argv
    sys.argv = argv
    try:
        script.main()
    except Exception as err:
        if "Unavailable" in type(err).__name__:  # the offline backbone or data set is not installed
            raise Skip(str(err)) from None
        raise
    finally:
        sys.argv = saved
    raw = json.loads(out.read_text())
    out.unlink()
    ag = raw["agreement"]
    return {
        "description": f"real data, phase 2, one cell (n={raw['n']}) on {raw['backbone']}: training the final "
        "layer's query/key, AdamW, batch 16; per epoch",
        "ours": {
            "how": "cached hidden states entering the final layer, position 0 only, padding dropped",
            "s_per_epoch": raw["cached_s_per_epoch"],
            "epochs_timed": raw["cached_epochs_timed"],
            "priced_2000_epochs_s": raw["cached_2000_epochs_s"],
            "batched_s_per_run_epoch": raw["batched_s_per_run_epoch"],
            "batched_speedup_over_one_run": raw["batched_speedup_over_one_run"],
            "batched_speedup_over_full_backbone": raw["batched_speedup_over_full_backbone"],
            "batched_2000_epochs_s_per_run": raw["batched_2000_epochs_s_per_run"],
        },  # fmt: skip
        "reference": {
            "how": "the full backbone forward every batch (inputs padded to max_length)",
            "s_per_epoch": raw["full_s_per_epoch"],
            "epochs_timed": raw["full_epochs_timed"],
            "priced_2000_epochs_s": raw["full_2000_epochs_s"],
        },  # fmt: skip
        "ratio": raw["speedup"],
        "agreement": {
            "logits_max_abs_diff_before_training": ag["logits_max_abs_diff_before_training"],
            "epoch_loss_max_abs_diff": ag["epoch_loss_max_abs_diff"],
            "within_1e-5": ag["epoch_loss_max_abs_diff"] <= 1e-5,
        },
        "target": target("ratio (per epoch)", ">=", 20, round(raw["speedup"], 2)) if not ctx.quick else None,
        "script_output": raw,
    }


def _time(cmd: list[str], repeats: int) -> dict:
    walls, out = [], ""
    for _ in range(repeats):
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        walls.append(time.perf_counter() - start)
        out = proc.stdout + proc.stderr
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{out[-2000:]}")
    m = re.search(r"^total\s+(\d+)", out, re.M)
    return {"command": " ".join(cmd), "median_wall_s": round(statistics.median(walls), 3),
            "walls_s": [round(w, 3) for w in walls], "jobs_planned": int(m.group(1)) if m else None}  # fmt: skip


def _slurm_state() -> dict:
    """Whether SLURM's client tools are installed and a controller answers: with the tools but no
    controller, the SLURM executor plugin's probes add about 9 s to every snakemake call."""
    tools = shutil.which("sinfo") is not None
    answers = None
    if tools:
        try:
            answers = subprocess.run(["sinfo", "-h"], capture_output=True, timeout=30).returncode == 0
        except subprocess.TimeoutExpired:
            answers = False
    note = "client tools without a controller: every snakemake call is slowed" if tools and not answers else None
    return {"client_tools": tools, "controller_answers": answers, "note": note}


def dry_run(ctx: Context) -> dict:
    """Wall time of `snakemake -n` (default and paper configs), of parsing the Snakefile alone
    (--list-rules) and of importing snakemake, from the repository root."""
    smk = str(Path(sys.executable).with_name("snakemake"))
    if not Path(smk).exists():
        smk = shutil.which("snakemake") or ""
    if not smk:
        raise Skip("snakemake is not installed")
    repeats = 1 if ctx.quick else 3
    runs = {
        "import_snakemake": _time([sys.executable, "-c", "import snakemake.api"], repeats),
        "parse_snakefile_list_rules": _time([smk, "--list-rules"], repeats),
        "dry_run_default_config": _time([smk, "-n"], repeats),
        "dry_run_paper_config": _time([smk, "-n", "--configfile", "config/paper.yaml"], repeats),
    }
    worst = max(runs["dry_run_default_config"]["median_wall_s"], runs["dry_run_paper_config"]["median_wall_s"])
    return {
        "description": "snakemake dry runs from the repository root (median of 3); jobs_planned depends on "
        "what results/ already holds",
        "slurm": _slurm_state(),
        "ours": runs,
        "reference": None,
        "ratio": None,
        "agreement": None,
        "target": target("slowest dry run, seconds", "<=", 10, worst),
    }
