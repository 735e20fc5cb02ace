#!/usr/bin/env bash
# Set up the project in .venv (idempotent). With --system (as root, Debian/Ubuntu), also install
# the system packages some tests and offline data use: SLURM + munge, Chromium, Fashion-MNIST.
set -euo pipefail
cd "$(dirname "$0")"
if [[ "${1:-}" == "--system" ]]; then
    bash ci/setup-system.sh
fi
[[ -x .venv/bin/python ]] || python3 -m venv .venv
# --no-compile: Python compiles a module when it is first imported, so compiling every file of
# every package up front (torch's thousands) is work a run may never need.
pip=(.venv/bin/python -m pip install -q --disable-pip-version-check --no-compile)
"${pip[@]}" -r requirements.txt
"${pip[@]}" --no-deps -r requirements-assets.txt -r requirements-nodeps.txt
"${pip[@]}" --no-deps --no-build-isolation -e .
