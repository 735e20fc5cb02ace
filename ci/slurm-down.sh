#!/usr/bin/env bash
# Stop the daemons started by ci/slurm-up.sh, by their pid files, and remove the configuration it
# wrote: with a slurm.conf whose controller is down, every `scontrol` waits seconds for it, and
# Snakemake's SLURM plugin calls `scontrol show config` each time Snakemake starts, whatever the
# executor (slurm-up.sh writes the file again).
set -u
for pf in /run/slurmd.pid /run/slurmctld.pid /run/munge/munged.pid; do
  [ -s "$pf" ] || continue
  pid=$(cat "$pf")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    echo "stopped $pf ($pid)"
  fi
  # slurmctld leaves a stale pid file, which later breaks `apt-get purge slurmctld`
  rm -f "$pf"
done
if head -n 1 /etc/slurm/slurm.conf 2>/dev/null | grep -qx "ClusterName=ci"; then  # ours, not a site's
  rm -f /etc/slurm/slurm.conf /etc/slurm/gres.conf
fi
