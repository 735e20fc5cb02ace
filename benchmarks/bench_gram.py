"""The token model's Gram engine (benign.synthetic.gram): a run's cost at d = 10^3 to 10^7, its
set-up against the explicit engine's, and its per-step cost against the memory-traffic floor
of the N x N state."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time

import numpy as np
import torch

from benchmarks.common import ROOT, Context, Skip, target, timed
from benign.synthetic.models import build
from benign.synthetic.trainer import RunSpec, train_runs

SCALE_DIMS = (10**3, 10**5, 10**7)
ONE_RUN = """
import json, resource, sys, time, torch
torch.set_num_threads({threads})
from benign.synthetic.trainer import RunSpec, train_runs
spec = RunSpec(engine="gram", d={d}, n={n}, signal_norm={norm}, steps={steps})
start = time.perf_counter()
runs, _, _ = train_runs([spec], device="cpu")
wall = time.perf_counter() - start
row = runs.iloc[0]
print(json.dumps({{"d": {d}, "wall_s": wall, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "test_loss_normalised": float(row.test_loss_normalised), "train_acc_noisy": float(row.train_acc_noisy)}}))
"""


def _one_run(ctx: Context, d: int, n: int, steps: int) -> dict:
    """One Gram-engine run in its own process, so that its peak memory is its own."""
    code = ONE_RUN.format(threads=ctx.threads, d=d, n=n, norm=2.0 * d**0.25, steps=steps)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def gram_scale(ctx: Context) -> dict:
    """One token run (n 20, 10^4 steps, ||mu|| = 2 d^(1/4)) with the Gram engine at d = 10^3,
    10^5 and 10^7: the wall time should not depend on d, and 10^7 should stay under 1 GB."""
    steps = 200 if ctx.quick else 10_000
    rows = [_one_run(ctx, d, 20, steps) for d in SCALE_DIMS]
    walls = [r["wall_s"] for r in rows]
    spread = max(walls) / min(walls)
    return {
        "description": f"one token run, n 20, T 8, {steps} steps, engine gram, at d = {SCALE_DIMS}; each in its own process",
        "runs": rows,
        "wall_max_over_min": round(spread, 3),
        "target": target("wall max / min over d", "<=", 1.5, round(spread, 3)),
        "target_memory": target("peak RSS at d 10^7 (MB)", "<=", 1024, round(rows[-1]["peak_rss_mb"], 1)),
    }


def gram_setup(ctx: Context) -> dict:
    """The set-up (data, W0 and the shared products) of one token batch, n 20, T 8, at d 2000
    and 7200: the explicit engine's (d x d uniform W0, products O(N d^2)) against the Gram
    engine's (Bartlett factors and products in 2(N + 2) coordinates)."""
    dims = (200, 400) if ctx.quick else (2000, 7200)
    out = {}
    for d in dims:
        row = {}
        for engine in ("explicit", "gram"):
            kw = dict(n=20, T=8, d=d, sigma=1.0, n_test=1000, seed=1, signal_norms=[20.0], rhos=[0.1], etas=[0.2],
                      lrs=[0.005], device=ctx.device, engine=engine)  # fmt: skip
            build("token", **kw)  # warm-up
            best = min(_timed_build(kw) for _ in range(3))
            row[f"{engine}_s"] = round(best, 4)
        row["ratio"] = round(row["explicit_s"] / row["gram_s"], 1)
        out[str(d)] = row
    return {"description": "set-up of one token batch (n 20, T 8, n_test 1000), fastest of 3", "per_d": out}


def _timed_build(kw: dict) -> float:
    with timed(kw["device"]) as t:
        build("token", **kw)
    return t.wall


def _bandwidth_gb_s(nbytes: int, repeats: int = 50) -> float:
    """Copy bandwidth (read + write) on a buffer of ``nbytes``: the floor's rate for a state of
    that size (in cache when it fits, from memory when it does not)."""
    a = torch.ones(max(nbytes // 8, 1), dtype=torch.float64)
    b = torch.empty_like(a)
    b.copy_(a)
    start = time.perf_counter()
    for _ in range(repeats):
        b.copy_(a)
    return 2 * a.numel() * 8 * repeats / (time.perf_counter() - start) / 1e9


def gram_step(ctx: Context) -> dict:
    """Per-step cost of one run of the trained-W token model (the same program for both engines)
    at n 10, 20, 40 and 80 (T 8, N = nT), against the memory-traffic floor of its N x N state.

    The floor: a step must read A (N x N, float64) three times (A G c, A^T S g, and in the
    update) and write it once, and read the shared S once and G twice (S h, S g; G c): seven
    passes over N^2 float64 numbers, at the copy bandwidth measured on a buffer of that size."""
    ns = (2, 4) if ctx.quick else (10, 20, 40, 80)
    steps = 50 if ctx.quick else 500
    out = {}
    for n in ns:
        spec = RunSpec(engine="gram", n=n, d=max(10**6, 4 * (8 * n + 2)), signal_norm=100.0, steps=steps)
        train_runs([spec], device=ctx.device)  # warm-up
        model = build("token", n=n, T=8, d=spec.d, sigma=1.0, n_test=100, seed=1, signal_norms=[100.0], rhos=[0.1],
                      etas=[0.2], lrs=[0.005], device=ctx.device, engine="gram")  # fmt: skip
        for _ in range(5):
            model.step()
        times = []
        for _ in range(3):
            start = time.perf_counter()
            for _ in range(steps):
                model.step()
            times.append((time.perf_counter() - start) / steps)
        N = 8 * n
        nbytes = 7 * N * N * 8
        bandwidth = _bandwidth_gb_s(N * N * 8)
        floor = nbytes / (bandwidth * 1e9)
        per_step = min(times)
        out[str(n)] = {
            "N": N,
            "us_per_step": round(per_step * 1e6, 2),
            "floor_us": round(floor * 1e6, 2),
            "over_floor": round(per_step / floor, 1),
            "state_mb": round(N * N * 8 / 2**20, 3),
            "copy_bandwidth_gb_s": round(bandwidth, 1),
        }
    return {
        "description": "one run's gradient step (trained W), fastest of 3 x "
        f"{steps} steps, against 7 passes over the N x N float64 state at the measured copy bandwidth",
        "per_n": out,
        "steps_per_n_fit": _slope(out),
    }


def _slope(per_n: dict) -> float:
    """The exponent of the per-step time in N over the measured n (2 = the N^2 state's)."""
    N = np.array([r["N"] for r in per_n.values()], dtype=float)
    t = np.array([r["us_per_step"] for r in per_n.values()], dtype=float)
    return round(float(np.polyfit(np.log(N), np.log(t), 1)[0]), 2)


def _atlas_batches(n: int, d: int) -> list[RunSpec]:
    """The runs of the default atlas's first batch at (d, n): one seed's signal norms, as the
    workflow trains them (benign.plan.jobs.synthetic_jobs on config/config.yaml)."""
    import yaml

    from benign.plan.jobs import synthetic_jobs
    from benign.plan.load import read

    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    runs = [
        RunSpec(**r)
        for job in synthetic_jobs(read(cfg, ROOT / "workflow" / "schemas" / "config.schema.yaml")).values()
        for r in job
    ]
    line = [s for s in runs if s.setting == "atlas" and s.n == n and s.d == d]
    first = min(s.batch_key() for s in line)
    return [s for s in line if s.batch_key() == first]


def _iteration_us(model, repeats: int) -> float:
    """One flow iteration as flow.advance takes it: a kept step, its logits, the step taken back
    (so the state does not run away while timed); fastest mean of 3 x ``repeats``."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(repeats):
            model.step(1.0, keep=True)
            model.scores()
            model.undo()
        best = min(best, (time.perf_counter() - start) / repeats)
    return best * 1e6


def flow_batch(ctx: Context) -> dict:
    """The atlas's batched sweep as the workflow runs it: one batch of the default atlas (one
    seed's signal norms at d = 10^5) trained by the gradient flow to the atlas's horizon, at
    n = 10, 20, 40 and 80, and its iteration (a kept step, the logits, the step taken back) at 1
    and 2 threads, against the floor of B x 7 passes over the N x N float64 state (gram_step)."""
    from benign.synthetic.trainer import _batch

    ns = (10, 20) if ctx.quick else (10, 20, 40, 80)
    repeats = 20 if ctx.quick else 200
    out = {}
    for n in ns:
        specs = _atlas_batches(n, 10**5)
        if ctx.quick:
            specs = [dataclasses.replace(s, steps=1000, log_points=5) for s in specs]
        train_runs(specs[:1], device=ctx.device)  # warm-up
        start = time.perf_counter()
        runs, _, _ = train_runs(specs, device=ctx.device)
        wall = time.perf_counter() - start
        iterations = int(runs["iterations"].iloc[0])
        model = _batch(specs, ctx.device, None)
        per_thread = {}
        for threads in (1, 2):
            torch.set_num_threads(threads)
            per_thread[str(threads)] = round(_iteration_us(model, repeats), 1)
        torch.set_num_threads(ctx.threads)
        B, N = len(specs), 8 * n
        bandwidth = _bandwidth_gb_s(B * N * N * 8)
        floor_us = 7 * B * N * N * 8 / (bandwidth * 1e9) * 1e6
        out[str(n)] = {
            "B": B,
            "N": N,
            "d": specs[0].d,
            "steps": specs[0].steps,
            "dtype": str(model.dtype),
            "batch_wall_s": round(wall, 3),
            "iterations": iterations,
            "us_per_iteration_in_training": round(wall / iterations * 1e6, 1),
            "us_per_iteration_by_threads": per_thread,
            "floor_us": round(floor_us, 1),
            "over_floor": round(per_thread["1"] / floor_us, 1),
            "state_mb": round(B * N * N * 8 / 2**20, 2),
            "copy_bandwidth_gb_s": round(bandwidth, 1),
        }
    return {
        "description": "one batch of the default atlas (d 10^5, one seed's norms, gradient flow to its horizon) per n; "
        "its iteration at 1 and 2 threads against B x 7 passes over the N x N float64 state",
        "per_n": out,
        "blas": _blas(),
    }


def _blas() -> dict:
    """The library paths torch takes on this machine: its BLAS, oneDNN and the CPU kernels' ISA."""
    build = torch.__config__.show()
    info = next(
        (part.split("=", 1)[1] for part in build.replace(",", "\n").split() if part.startswith("BLAS_INFO=")), ""
    )
    return {
        "blas": info,
        "mkldnn": torch.backends.mkldnn.is_available(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
    }


def _atlas_line(n: int, d: int, seed: int) -> list[RunSpec]:
    """One line of the default atlas, every signal norm of one seed, as the workflow trains it."""
    import yaml

    from benign.plan.jobs import synthetic_jobs
    from benign.plan.load import read

    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    runs = [
        RunSpec(**r)
        for job in synthetic_jobs(read(cfg, ROOT / "workflow" / "schemas" / "config.schema.yaml")).values()
        for r in job
    ]
    return [s for s in runs if s.setting == "atlas" and s.n == n and s.d == d and s.seed == seed]


# Labels the atlas reads (benign.analysis.theory): compared for equality at every logged step.
W_DTYPE_LABELS = ("train_acc", "test_acc", "train_acc_noisy", "test_sel_relevant", "test_err_hardmax",
                  "train_noisy_sel_relevant", "train_clean_sel_relevant")  # fmt: skip


def w_dtype(ctx: Context) -> dict:
    """W's trained correction A in float32 (the atlas's ``w_dtype``) against float64, on one line
    of the default atlas per d (the largest n it has there), two seeds, every norm, to its
    horizon: the flow's iterations, every label at every logged step (the horizons and the
    along-time steps among them), the losses, and each line's time both ways (per N = n T)."""
    if ctx.cuda:  # the models compute in float32 there: both sides would be the same program
        raise Skip("w_dtype compares CPU precisions; on a GPU A is float32 either way")
    lines = [(10, 10**3), (40, 10**4), (80, 10**5), (80, 10**6), (80, 10**7)]
    seeds = (1,) if ctx.quick else (1, 2)
    rows = []
    for n, d in lines:
        for seed in seeds:
            base = _atlas_line(n, d, seed)
            if ctx.quick:
                base = [dataclasses.replace(s, steps=1000, log_points=7) for s in base]
            got = {}
            for w in ("float64", "float32"):
                specs = [dataclasses.replace(s, w_dtype=w) for s in base]
                start = time.perf_counter()
                runs, curves, _ = train_runs(specs, device=ctx.device)
                wall = time.perf_counter() - start
                order = {r: i for i, r in enumerate(s.run_id for s in specs)}
                curves = curves.assign(run=curves["run_id"].map(order)).set_index(["run", "step"]).sort_index()
                got[w] = (runs.assign(run=runs["run_id"].map(order)).set_index("run").sort_index(), curves, wall)
            (r64, c64, t64), (r32, c32, t32) = got["float64"], got["float32"]
            labels = int(sum((c64[k] != c32[k]).sum() for k in W_DTYPE_LABELS))
            rel = max(float(((c64[k] - c32[k]).abs() / c64[k].abs().clip(lower=1e-300)).max())
                      for k in ("train_loss", "test_loss"))  # fmt: skip
            rows.append({"d": d, "n": n, "N": n * base[0].T, "seed": seed, "runs": len(base), "steps": base[0].steps,
                         "logged_values": int(len(c64) * len(W_DTYPE_LABELS)), "labels_differing": labels,
                         "iterations_differing": int((r64["iterations"] != r32["iterations"]).sum()),
                         "loss_max_rel_diff": rel, "float64_s": round(t64, 2), "float32_s": round(t32, 2),
                         "speedup": round(t64 / t32, 2)})  # fmt: skip
    return {
        "description": "W's trained correction A in float32 against float64 on default-atlas lines (one per d, the "
        "largest n there, every norm, to the horizon): labels at every logged step, the flow's iterations, losses, time",
        "lines": rows,
        "labels_differing": sum(r["labels_differing"] for r in rows),
        "logged_values": sum(r["logged_values"] for r in rows),
        "target": target("labels differing", "<=", 0, sum(r["labels_differing"] for r in rows)),
        "blas": _blas(),
    }
