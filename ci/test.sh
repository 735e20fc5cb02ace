#!/usr/bin/env bash
# The whole test suite on two processes, one per core of a small machine: the end-to-end
# workflow and SLURM tests (which share one smoke build, and mostly wait on Snakemake and the
# scheduler) with the longest simulations (marked slow) in one, every other test in the other.
# Arguments go to both pytest calls.
# Prints the end-to-end part's output after the other's. Exits non-zero if either part fails;
# a part with no test selected (pytest's 5, say for one file given) is not a failure unless
# neither part has one.
set -uo pipefail
cd "$(dirname "$0")/.."
# One BLAS thread in every process the tests start: with two cores shared by many processes,
# each BLAS pool's waiting threads stall the others (the boundary fits' tests took 97 s instead
# of 12 beside three BLAS-bound processes, Intel Xeon). Training jobs set their own threads.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
log=$(mktemp)
trap 'rm -f "$log"' EXIT
.venv/bin/python -m pytest -q -ra -m "slow or slurm" "$@" >"$log" 2>&1 &
end_to_end=$!
.venv/bin/python -m pytest -q -ra -m "not slow and not slurm" "$@"
rest=$?
wait "$end_to_end"
slow=$?
echo "---- end-to-end and SLURM tests ----"
cat "$log"
if ((rest == 5 && slow == 5)); then exit 5; fi
((rest == 5)) && rest=0
((slow == 5)) && slow=0
exit $((rest != 0 || slow != 0))
