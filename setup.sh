#!/usr/bin/env bash
# Set up the project in .venv (idempotent). With --system (as root, Debian/Ubuntu), also install
# the system packages some tests and offline data use: SLURM + munge, Chromium, Fashion-MNIST.
set -euo pipefail
cd "$(dirname "$0")"
if [[ "${1:-}" == "--system" ]]; then
    bash ci/setup-system.sh
fi
[[ -x .venv/bin/python ]] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps -r requirements-assets.txt
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps -r requirements-nodeps.txt
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
