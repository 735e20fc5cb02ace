"""Render the results table of benchmarks/README.md from the JSON files in benchmarks/results/
(and benchmarks/results/gpu/ when present). Run: .venv/bin/python -m benchmarks.render"""

from __future__ import annotations

import json
import re
from pathlib import Path

from benchmarks.common import BY_CPU, RESULTS

README = Path(__file__).resolve().parent / "README.md"
START, END = "<!-- results:start -->", "<!-- results:end -->"
KIND_START, KIND_END = "<!-- per-kind:start -->", "<!-- per-kind:end -->"
ORDER = [
    "token_single", "token_row", "token_grid", "atlas", "encoder_500", "encoder_2000", "encoder_grid", "encoder_defer",
    "real_phase2", "real_flops", "dry_run",
]  # fmt: skip


def _cpu(machine: dict) -> str:
    """The CPU's name and, where recorded, its widest vector instructions: one model name covers
    CPUs with and without AVX-512, whose times differ."""
    isa = machine.get("vector_isa")
    return f"{machine.get('processor', '')}, {isa}" if isa else machine.get("processor", "")


def _s(x: float | None) -> str:
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:,.0f} s"
    return f"{x:.3g} s" if x >= 0.1 else f"{x * 1000:.3g} ms"


def _e(x: float) -> str:
    return f"{x:.1e}"


def _cells(r: dict) -> tuple[str, str, str, str]:
    """(ours, reference, ratio, agreement) for one result."""
    name, o, ref, ag = r["name"], r.get("ours") or {}, r.get("reference") or {}, r.get("agreement") or {}
    ratio = f"**{r['ratio']:.1f}x**" if r.get("ratio") else "-"
    if name == "token_single":
        f32 = ag["float32_reference_vs_ours"]
        ours = f"{_s(o['default_logging_steps_0_and_1000']['wall_s'])} (logging every step: {_s(o['logging_every_step']['wall_s'])})"
        refs = f"{_s(ref['wall_s_logging_every_step'])} ({ref['measured']})"
        ratio += (
            f"; like for like: {r['ratios']['like_for_like_both_logging_every_step']}x every step, "
            f"{r['ratios']['like_for_like_both_logging_steps_0_and_1000']}x ends only"
        )
        agree = (
            f"float32 ref: max abs loss diff {_e(max(f32['max_abs_train_loss_diff'], f32['max_abs_test_loss_diff']))}, "
            f"accuracy differs at {f32['steps_with_train_acc_differing'] + f32['steps_with_test_acc_differing']} "
            f"of {f32['steps_compared']} steps; float64 ref: "
            f"{_e(ag['float64_reference_vs_ours_prefix']['max_abs_train_loss_diff'])}"
        )
    elif name == "atlas":
        ours = f"{_s(o['wall_s'])} ({o['runs']} runs; {_s(o['cpu_s_sum'])} of job time)"
        refs, agree = "-", "-"
    elif name in ("token_row", "token_grid"):
        ours = _s(o["wall_s"])
        refs = f"{_s(ref['wall_s_logging_every_step'])} (extrapolated)"
        ratio += f"; ends-only logging: {r['ratios']['like_for_like_both_logging_at_0_and_end']}x"
        if name == "token_row":
            agree = (
                f"final loss max abs diff {_e(ag['max_abs_final_loss_diff'])} ({len(ag['cells'])} cells), "
                f"accuracy {'equal' if all(c['acc_equal'] for c in ag['cells']) else 'DIFFERS'}"
            )
        else:
            agree = f"{ag['runs_ok']}/{ag['runs']} runs finite"
    elif name in ("encoder_500", "encoder_2000"):
        full = o.get("measured_full")
        ours = _s(full["wall_s"]) if full else f"{_s(o['priced_from_prefix_s']['logging_every_50_steps'])} (priced)"
        refs = f"{_s(ref['priced_s']['logging_every_50_steps'])} (extrapolated)"
        ratio += f"; per step {r['ratios']['per_training_step']}x, per evaluation {r['ratios']['per_evaluation']}x"
        if "logging_every_10_steps_priced" in r["ratios"]:
            ratio += (
                f", both logging every 10 steps (the authors' schedule) {r['ratios']['logging_every_10_steps_priced']}x"
            )
        f32 = ag["float32"]
        agree = (
            f"float32, {ag['prefix_steps']} steps: max abs loss diff {_e(f32['max_abs_step_loss_diff'])}; "
            f"float64: {_e(ag['float64']['max_abs_step_loss_diff'])}"
        )
    elif name == "encoder_grid":
        ours = f"{_s(o['wall_s_whole_grid'])}" + (
            "" if o["complete"] else f" ({o['d_measured']}/{o['d_total']} d measured, rest priced)"
        )
        refs, agree = "-", f"{o['runs_ok']}/{o['runs_trained']} runs finite"
    elif name == "encoder_defer":
        per_d = o["per_d"]
        ours = (
            "deferred: "
            + ", ".join(f"d {d} {_s(v['ms_per_step_deferred'] / 1e3)}" for d, v in per_d.items())
            + " per step"
        )
        refs = "at once: " + ", ".join(f"d {d} {_s(v['ms_per_step_at_once'] / 1e3)}" for d, v in per_d.items())
        ratio = ", ".join(f"d {d} **{v['speedup']:.2f}x**" for d, v in per_d.items())
        agree = f"losses after the same steps: max abs diff {_e(ag['max_abs_loss_diff'])}"
    elif name == "real_phase2":
        ours = f"{_s(o['s_per_epoch'])}/epoch"
        if o.get("batched_s_per_run_epoch"):
            ours += "; batched, per run: " + ", ".join(
                f"{R} runs {_s(s)} ({o['batched_speedup_over_one_run'][R]:.1f}x"
                + (
                    f", {o['batched_speedup_over_full_backbone'][R]:.0f}x full"
                    if "batched_speedup_over_full_backbone" in o
                    else ""
                )
                + ")"
                for R, s in o["batched_s_per_run_epoch"].items()
            )
        refs = f"{_s(ref['s_per_epoch'])}/epoch"
        agree = f"epoch loss max abs diff {_e(ag['epoch_loss_max_abs_diff'])}, logits {_e(ag['logits_max_abs_diff_before_training'])}"
    elif name == "real_flops":

        def form(v: dict) -> str:
            return f"{v['gflop_per_run_epoch']:.2f} GFLOP, {_s(v['s_per_run_epoch'])} ({v['gflop_per_s']:.0f} GFLOP/s)"

        shapes = r["shapes"]
        ours = "; ".join(f"{k}: {form(v['ours'])}" for k, v in shapes.items())
        refs = "; ".join(f"{k}: {form(v['mix_then_project'])}; plain {form(v['plain'])}" for k, v in shapes.items())
        ratio = ", ".join(f"{k} **{v['speedup_over_mix_then_project']:.2f}x**" for k, v in shapes.items())
        agree = ", ".join(f"{k}: losses rel diff {_e(v['losses_max_rel_diff'])}" for k, v in shapes.items())
    elif name == "dry_run":
        ours = ", ".join(f"{k.replace('_', ' ')} {_s(v['median_wall_s'])}" for k, v in o.items())
        refs, agree = "-", "-"
    else:
        ours, refs, agree = "?", "?", "?"
    return ours, refs, ratio, agree


def table(folder: Path) -> str:
    rows = []
    for name in ORDER:
        path = folder / f"{name}.json"
        if not path.exists():
            continue
        r = json.loads(path.read_text())
        if "machine" not in r:  # e.g. benchmarks/real_phase2.py run on its own writes its own format
            rows.append(f"| {name} | not written by the suite: run `python -m benchmarks --only {name}` | | | | | | |")
            continue
        if r.get("skipped"):
            rows.append(f"| {name} | skipped: {r['skipped']} | | | | | | |")
            continue
        ours, refs, ratio, agree = _cells(r)
        t = r.get("target")
        tgt = f"{t['op']} {t['value']}: {'met' if t['met'] else '**missed**'}" if t else "-"
        m = r["machine"]
        mem = f"{r['peak_memory']['ru_maxrss_mb']:,.0f}"
        if "cuda_max_memory_allocated_mb" in r["peak_memory"]:
            mem += f" (GPU {r['peak_memory']['cuda_max_memory_allocated_mb']:,.0f})"
        rows.append(
            f"| {name}{{cpu:{_cpu(m)}}} | {ours} | {refs} | {ratio} | {tgt} | {agree} | {mem} | {m['torch_threads']} |"
        )
    if not rows:
        return ""
    machines = [
        json.loads((folder / f"{n}.json").read_text()).get("machine") for n in ORDER if (folder / f"{n}.json").exists()
    ]
    any_r = next((m for m in machines if m), None)
    if any_r is None:
        return "\n".join(rows)
    # Rows measured on other CPUs than the first say so (the machine changes between runs).
    processors = [_cpu(m) for m in machines if m]
    rows = [
        re.sub(r"\{cpu:([^}]*)\}", lambda g: "" if g.group(1) == processors[0] else f" ({g.group(1)})", row)
        for row in rows
    ]
    where = any_r.get("cuda_device") or f"{_cpu(any_r)}, {any_r['cpu_count']} CPUs"
    head = (
        f"Machine: {where}; torch {any_r['torch_version']}; device {any_r['device']}.\n\n"
        "| benchmark | ours | reference | ratio | target | agreement | peak RSS MB | threads |\n"
        "|---|---|---|---|---|---|---|---|"
    )
    return head + "\n" + "\n".join(rows)


def _per_n(r: dict, cell) -> str:
    return "; ".join(f"n {n}: {cell(v)}" for n, v in r["per_n"].items())


def per_kind(folder: Path = BY_CPU) -> str:
    """One row per CPU kind and benchmark of the CPU's own costs (results/cpu/<kind>/*.json):
    the Gram engine's step, the atlas's flow batch, the atlas as a whole and W's precision, each
    with its date."""
    rows = []
    for kind in sorted(p for p in folder.glob("*") if p.is_dir()):
        for name in ("gram_step", "flow_batch", "atlas", "w_dtype"):
            path = kind / f"{name}.json"
            if not path.exists():
                continue
            r = json.loads(path.read_text())
            m, day = r["machine"], r.get("started_utc", "")[:10]
            if name == "gram_step":
                what = _per_n(r, lambda v: f"{v['us_per_step']:.0f} us ({v['over_floor']}x floor)")
            elif name == "flow_batch":
                what = _per_n(
                    r,
                    lambda v: (
                        f"B {v['B']}: {v['us_per_iteration_by_threads']['1']:,.0f} us ({v['over_floor']}x floor), "
                        f"2 threads {v['us_per_iteration_by_threads']['2']:,.0f} us; batch to {v['steps']:.0e} steps "
                        f"{v['batch_wall_s']:.2f} s in {v['iterations']} iterations"
                    ),
                )
                blas = r.get("blas", {})
                what += f" (BLAS {blas.get('blas', '?')}, kernels {blas.get('cpu_capability', '?')})"
            elif name == "w_dtype":
                lines = r["lines"]
                what = (
                    "; ".join(
                        f"d {v['d']:.0e} n {v['n']} seed {v['seed']}: {v['float64_s']:.1f} s float64, {v['float32_s']:.1f} s "
                        f"float32 ({v['speedup']}x), {v['labels_differing']} labels and {v['iterations_differing']} runs' "
                        "step counts differing"
                        for v in lines
                    )
                    + f" (of {r['logged_values']} logged label values)"
                )
            else:
                what = f"{_s(r['ours']['wall_s'])} on {m['cpu_count']} workers ({r['ours']['runs']} runs)"
            rows.append(f"| {_cpu(m)} | {name} | {what} | {m['torch_threads']} | {day} |")
    if not rows:
        return "(no per-kind results yet)"
    return "| CPU | benchmark | result | threads | measured |\n|---|---|---|---|---|\n" + "\n".join(rows)


def _between(text: str, start: str, end: str, body: str) -> str:
    return re.sub(re.escape(start) + r".*?" + re.escape(end), lambda _: f"{start}\n{body}\n{end}", text, flags=re.S)


def render_readme() -> None:
    parts = []
    cpu = table(RESULTS)
    if cpu:
        parts.append("### CPU\n\n" + cpu)
    gpu = table(RESULTS / "gpu")
    if gpu:
        parts.append("### GPU\n\n" + gpu)
    body = "\n\n".join(parts) or "(no results yet: run the suite)"
    text = README.read_text() if README.exists() else f"{START}\n{END}\n"
    new = _between(text, START, END, body)
    if KIND_START in new:
        new = _between(new, KIND_START, KIND_END, per_kind())
    README.write_text(new)


if __name__ == "__main__":
    render_readme()
    print(f"wrote the results table of {README}")
