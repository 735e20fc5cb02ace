#!/usr/bin/env bash
# The benchmark suite on a CUDA machine, including the encoder heatmap grid at the paper's
# settings (39 d x 39 signal norms = 1521 runs, mlp_dim 2000, 1000 steps, one train_runs call
# per d; on CUDA the library trains in float32). On one H200 the grid alone took about
# 8 minutes (priced) before the encoder deferred its updates on CUDA; past its budget (below)
# the d left are priced. Results: benchmarks/results/gpu/.
#
#   bash benchmarks/gpu_suite.sh           # on the GPU machine
#   bash benchmarks/gpu_suite.sh --quick   # toy sizes on whatever device there is (the CPU on a
#                                          # machine without CUDA): checks that the script runs;
#                                          # results in results/gpu/quick/
#
# Order: tests/synthetic/test_cuda.py (CUDA against the CPU in float64, seconds), then the encoder grid
# (the item that needs the GPU), with a budget (GRID_BUDGET_S, default 420 s): if it would not
# finish by then, the remaining d are priced from a quadratic fit in d of the measured ones
# and the JSON says so (complete: false). Then the other benchmarks, each skipped when the
# script's time so far plus the benchmark's expected time (from the last H200 run) would pass
# DEADLINE_S (default 590 s), so that the script ends within 10 minutes.
# Every benchmark writes its JSON as soon as it ends, so a killed run keeps what finished.
#
# Needs python with a CUDA build of torch and this project importable (PYTHON=... to choose
# the interpreter), with jsonschema (the config schema). snakemake (dry_run) and transformers
# with the offline MiniLM assets (real_phase2) are optional: when missing, the benchmark is
# recorded as skipped.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
THREADS="${THREADS:-4}"
GRID_BUDGET_S="${GRID_BUDGET_S:-420}"
DEADLINE_S="${DEADLINE_S:-590}"
OUT="${OUT:-benchmarks/results/gpu}"
QUICK=()
if [ "${1:-}" = "--quick" ] || [ "${1:-}" = "--dry" ]; then
  QUICK=(--quick)
  OUT="$OUT/quick"
fi
mkdir -p "$OUT"

"$PY" - <<'EOF'
import torch
print("torch", torch.__version__, "| CUDA available:", torch.cuda.is_available(),
      "|", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "running on CPU")
EOF

start=$(date +%s)
# First the correctness check on this device: the same runs on CUDA (float32) and on the CPU
# (float64) must agree (tests/synthetic/test_cuda.py; skipped where there is no CUDA, or no pytest).
# No conftest: the test needs none of its fixtures, and it imports snakemake, which a GPU image
# may lack.
if "$PY" -c "import pytest" 2>/dev/null; then
  "$PY" -m pytest -q -p no:cacheprovider --noconftest tests/synthetic/test_cuda.py 2>&1 | tee "$OUT/test_cuda.log" | tail -5 ||
    echo "tests/synthetic/test_cuda.py failed"
fi

run() {  # run NAME EXPECTED_S [ARGS...]
  local name=$1 expected=$2
  shift 2
  [ ${#QUICK[@]} -eq 0 ] || expected=0
  local used=$(($(date +%s) - start))
  if [ $((used + expected)) -gt "$DEADLINE_S" ]; then
    echo "skipping $name: ${used}s used, about ${expected}s more would pass the ${DEADLINE_S}s deadline"
    return 0
  fi
  # A failing benchmark is reported and the suite goes on.
  "$PY" -m benchmarks --only "$name" --threads "$THREADS" --out "$OUT" --no-render "${QUICK[@]}" "$@" ||
    echo "$name failed"
}

run encoder_grid 0 --budget-s "$GRID_BUDGET_S"
# The rest, most informative first, with the seconds each took on one H200 (a little more):
# encoder_defer measures the grid's choice of deferred updates; dry_run does not use the GPU
# (the CPU suite has it too).
for item in encoder_defer:45 token_single:35 encoder_2000:15 token_grid:65 real_phase2:15 token_row:15 \
  encoder_500:12 dry_run:15; do
  run "${item%%:*}" "${item##*:}"
done
"$PY" -m benchmarks.render >/dev/null || echo "rendering the README table failed"
echo "done in $(($(date +%s) - start)) s; results in $OUT"
