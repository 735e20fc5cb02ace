"""Pieces of the benchmark suite that decide what runs: the GPU script's deadline, and the
CUDA deferral benchmark at toy sizes (the suite itself is not part of the tests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

from benchmarks.bench_encoder import DEFER_STEPS, encoder_defer
from benchmarks.common import Context, Skip


def test_gpu_script_skips_what_would_pass_its_deadline(root, tmp_path):
    """With no time left, every benchmark is skipped, each with a message that says why, and
    nothing is written; the script still ends cleanly."""
    env = dict(os.environ, DEADLINE_S="0", OUT=str(tmp_path / "gpu"), PYTHON=sys.executable)
    out = subprocess.run(
        ["bash", "benchmarks/gpu_suite.sh"], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    names = ["encoder_grid", "encoder_defer", "token_single", "encoder_2000", "token_grid", "real_phase2", "token_row",
             "encoder_500", "dry_run"]  # fmt: skip
    for name in names:
        assert f"skipping {name}: " in out.stdout, name
    assert "would pass the 0s deadline" in out.stdout
    assert not list((tmp_path / "gpu").glob("*.json"))


def test_encoder_defer_benchmark_at_toy_sizes(tmp_path):
    """Both choices train the same runs (losses agree), each d gets both timings; without CUDA
    the real sizes are refused rather than timed on the CPU."""
    cpu = torch.device("cpu")
    result = encoder_defer(Context(device=cpu, threads=1, quick=True, out=tmp_path))
    per_d = result["ours"]["per_d"]
    assert list(per_d) == ["32", "64"]
    for row in per_d.values():
        assert row["ms_per_step_at_once"] > 0 and row["ms_per_step_deferred"] > 0
        assert row["max_abs_loss_diff"] <= 1e-5
    assert result["agreement"]["within_1e-4"]
    assert f"deferred by {DEFER_STEPS} steps" in result["description"]
    json.dumps(result)  # written as JSON by the suite
    with pytest.raises(Skip):
        encoder_defer(Context(device=cpu, threads=1, quick=False, out=tmp_path))


def test_per_kind_results_are_kept_and_rendered_one_row_per_kind_and_benchmark(tmp_path):
    """Two CPU kinds' results land in two folders and two rows, each naming its CPU and date."""
    from benchmarks.common import cpu_kind
    from benchmarks.render import per_kind

    intel = {"processor": "Intel(R) Xeon(R) Processor", "vector_isa": "AVX-512", "torch_threads": 1, "cpu_count": 2}
    amd = {"processor": "AMD EPYC 9B14 96-Core Processor", "vector_isa": "AVX2", "torch_threads": 1, "cpu_count": 2}
    assert cpu_kind(intel) == "intel-xeon-avx-512"
    assert cpu_kind(amd) == "amd-epyc-9b14-avx2"
    step = {"per_n": {"10": {"us_per_step": 115.0, "over_floor": 15.7}}}
    for m, us in ((intel, 115.0), (amd, 230.0)):
        folder = tmp_path / cpu_kind(m)
        folder.mkdir()
        result = {**step, "per_n": {"10": {"us_per_step": us, "over_floor": 15.7}}}
        (folder / "gram_step.json").write_text(json.dumps({**result, "machine": m, "started_utc": "2026-12-06T00:00"}))
    rows = [r for r in per_kind(tmp_path).splitlines() if r.startswith("| ") and "gram_step" in r]
    assert len(rows) == 2
    assert "AMD EPYC 9B14 96-Core Processor, AVX2" in rows[0] and "230 us" in rows[0]
    assert "Intel(R) Xeon(R) Processor, AVX-512" in rows[1] and "115 us" in rows[1]
    assert all("2026-12-06" in r for r in rows)
