#!/usr/bin/env bash
# Install the Debian packages that the offline Fashion-MNIST data and the SLURM and HTML-report
# tests need.
# Idempotent: does nothing (and needs no network) when they are already installed.
#   slurmctld slurmd slurm-client munge : single-node SLURM for tests/workflow/test_slurm.py
#   chromium                             : headless browser for tests/workflow/test_report.py
#   dataset-fashion-mnist                : Fashion-MNIST for the offline real-data edition
set -euo pipefail
pkgs="slurmctld slurmd slurm-client munge chromium dataset-fashion-mnist"
if dpkg -s $pkgs >/dev/null 2>&1; then
  echo "system packages already installed: $pkgs"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
echo "installed: $pkgs"
