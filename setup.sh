#!/usr/bin/env bash
# Set up the project in .venv (idempotent). With --system (as root, Debian/Ubuntu), also install
# the system packages some tests and offline data use: SLURM + munge, Chromium, Fashion-MNIST.
set -euo pipefail
cd "$(dirname "$0")"
if [[ "${1:-}" == "--system" ]]; then
    bash ci/setup-system.sh
fi
[[ -x .venv/bin/python ]] || python3 -m venv .venv
pip=(.venv/bin/python -m pip install -q --disable-pip-version-check --no-compile)
"${pip[@]}" -r requirements.txt
"${pip[@]}" --no-deps -r requirements-assets.txt -r requirements-nodeps.txt
"${pip[@]}" --no-deps --no-build-isolation -e .
# Bytecode, once, in parallel. Where PYTHONDONTWRITEBYTECODE is set (some machines set it), Python
# never caches what it compiles, so every job would compile every module it imports again
# (seconds per process for torch and pandas: most of a short job). Up-to-date files are skipped;
# a few files that packages ship for newer Pythons (torch's py312 test helpers) do not compile.
.venv/bin/python -m compileall -q -j 0 .venv/lib/python*/site-packages >/dev/null || true
