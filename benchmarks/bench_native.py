"""The native skinny products (benign/native) against torch's own (MKL on this CPU), on the
shapes of the encoder's training step."""

from __future__ import annotations

import time

import torch

from benchmarks.common import Context, Skip
from benign import native
from benign.encoder import whole_lines

MATRICES = 5  # as in a step: five different matrices in turn, so none stays in cache
REPEATS = 25


def _shapes(quick: bool) -> list[tuple[str, int, int, bool, int]]:
    """(label, rows, d, transposed, calls per d-2000 step) for square d x d matrices."""
    d2, d1, d5 = (200, 100, 500) if quick else (2000, 1000, 5000)
    return [
        (f"x W, 20 rows, d {d2}", 20, d2, False, 3),  # forward through W_v, W_1, W_2
        (f"x W^T, 20 rows, d {d2}", 20, d2, True, 3),  # their input gradients
        (f"x W, 1 row, d {d2}", 1, d2, False, 2),  # [CLS] query forward, W_k backward
        (f"x W^T, 1 row, d {d2}", 1, d2, True, 2),  # [CLS] key forward, W_q backward
        (f"x W, 20 rows, d {d1} (rows padded)", 20, d1, False, 0),
        (f"x W^T, 20 rows, d {d1}", 20, d1, True, 0),
        (f"x W, 20 rows, d {d5} (rows padded)", 20, d5, False, 0),
        (f"x W^T, 20 rows, d {d5}", 20, d5, True, 0),
    ]


def native_products(ctx: Context) -> dict:
    """Each shape: the native kernel and torch.bmm on the same operands, alternating, fastest
    and median of REPEATS calls, each call on the next of 5 matrices; agreement with float64."""
    if ctx.device.type != "cpu":
        raise Skip("the native kernels are CPU kernels")
    if torch.get_num_threads() != 1:
        raise Skip("the native kernels are used at one torch thread only")
    if native.library() is None:
        raise Skip("no C++ compiler, or BENIGN_NATIVE=0: nothing native to time")
    repeats = 3 if ctx.quick else REPEATS
    g = torch.Generator().manual_seed(0)
    rows_out, step_native, step_torch, worst_rel = [], 0.0, 0.0, 0.0
    for label, rows, d, transposed, per_step in _shapes(ctx.quick):
        Ws = [whole_lines(torch.randn(1, d, d, generator=g) / d**0.5) for _ in range(MATRICES)]
        x = torch.randn(1, rows, d, generator=g)
        assert native.applies(x, Ws[0], transposed) or ctx.quick, label

        def ours(W):
            return native.native_matmul(x, W, transposed)

        def theirs(W):
            return torch.bmm(x, W.transpose(1, 2) if transposed else W)

        times: dict[str, list[float]] = {"native": [], "torch": []}
        for i in range(repeats + 2):  # two warm-up rounds
            for name, fn in (("native", ours), ("torch", theirs)):
                W = Ws[(2 * i + (name == "torch")) % MATRICES]
                t = time.perf_counter()
                fn(W)
                if i >= 2:
                    times[name].append(time.perf_counter() - t)
        ref = torch.bmm(x.double(), (Ws[0].transpose(1, 2) if transposed else Ws[0]).double())
        rel = float((ours(Ws[0]).double() - ref).abs().max() / ref.abs().max())
        worst_rel = max(worst_rel, rel)
        best = {k: min(v) for k, v in times.items()}
        rows_out.append({
            "shape": label, "rows": rows, "d": d, "transposed": transposed,
            "native_ms": round(best["native"] * 1e3, 4), "torch_ms": round(best["torch"] * 1e3, 4),
            "native_median_ms": round(sorted(times["native"])[len(times["native"]) // 2] * 1e3, 4),
            "torch_median_ms": round(sorted(times["torch"])[len(times["torch"]) // 2] * 1e3, 4),
            "ratio": round(best["torch"] / best["native"], 3),
            "max_rel_diff_vs_float64": rel,
        })  # fmt: skip
        step_native += per_step * best["native"]
        step_torch += per_step * best["torch"]
    return {
        "description": "native skinny products against torch.bmm, same operands, alternating, fastest of "
        f"{repeats}; each call on the next of {MATRICES} matrices (as in a training step); headline: the 10 products "
        "of one encoder step at d 2000",
        "ours": {"step_products_s": step_native, "shapes": rows_out},
        "reference": {"how": "torch.bmm (MKL)", "step_products_s": step_torch},
        "ratio": step_torch / step_native,
        "agreement": {"max_rel_diff_vs_float64": worst_rel},
        "target": None,
    }
