#!/usr/bin/env bash
# Start a real single-node SLURM cluster on localhost for tests/workflow/test_slurm.py
# (Debian 12 packages, run as root, works without systemd).
#   FAKE_GPUS=N     advertise N fake GPUs as GRES gpu:fake:N (default 4; 0 = none), so that
#                   jobs requesting GPUs are scheduled; they see CUDA_VISIBLE_DEVICES but no CUDA
#   NODE_CPUS=C     CPUs the node offers to jobs (default 8; not enforced, so jobs share the
#                   machine's real cores)
#   NODE_MEM_MB=M   memory the node offers to jobs (default 32000; not enforced)
# The node looks like a small compute node whatever the machine has, so the requests in
# profiles/slurm are all valid here.
# There is no accounting database, so `sacct` does not work: clients must poll with squeue
# (slurm-status-command: squeue). Finished jobs stay visible to squeue for MinJobAge=7200 s: a run of the test suite can ask about a job long after it ended.
# Idempotent: a second call only (re)starts the daemons that are not running.
# Stop everything with ci/slurm-down.sh.
set -euo pipefail
FAKE_GPUS=${FAKE_GPUS:-4}
NODE_CPUS=${NODE_CPUS:-8}
NODE_MEM_MB=${NODE_MEM_MB:-32000}
HOST=$(hostname -s)
export DEBIAN_FRONTEND=noninteractive

alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# 1. packages (ci/setup-system.sh installs them too)
pkgs="slurmctld slurmd slurm-client munge"
if ! dpkg -s $pkgs >/dev/null 2>&1; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
fi

# 2. munge (Debian's postinst creates /etc/munge/munge.key)
[ -s /etc/munge/munge.key ] || runuser -u munge -- mungekey --create
install -d -o munge -g munge -m 0755 /run/munge
alive /run/munge/munged.pid || runuser -u munge -- /usr/sbin/munged

# 3. configuration
install -d -o slurm -g slurm /var/lib/slurm/slurmctld /var/lib/slurm/slurmd /var/log/slurm
gres_node=""; gres_types=""
if [ "$FAKE_GPUS" -gt 0 ]; then
  install -d /var/lib/slurm/fakegpu
  for i in $(seq 0 $((FAKE_GPUS - 1))); do
    # a character device like /dev/null: SLURM only needs a file to hand out
    [ -c /var/lib/slurm/fakegpu/gpu$i ] || mknod /var/lib/slurm/fakegpu/gpu$i c 1 3
  done
  echo "NodeName=$HOST Name=gpu Type=fake File=/var/lib/slurm/fakegpu/gpu[0-$((FAKE_GPUS - 1))]" > /etc/slurm/gres.conf
  gres_node="Gres=gpu:fake:$FAKE_GPUS"; gres_types="GresTypes=gpu"
else
  rm -f /etc/slurm/gres.conf
fi
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=ci
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=slurm
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmdSpoolDir=/var/lib/slurm/slurmd
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
$gres_types
# jobs asking for more than the node has are refused at submission instead of pending forever
EnforcePartLimits=ALL
# the node offers what NODE_CPUS and NODE_MEM_MB say, whatever the machine has
SlurmdParameters=config_overrides
# a job past its time limit gets SIGTERM, then SIGKILL 5 s later (default 30 s)
KillWait=5
# squeue status polling needs MinJobAge >= 3 x slurm-init-seconds-before-status-checks
MinJobAge=7200
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$NODE_CPUS RealMemory=$NODE_MEM_MB $gres_node State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF

# 4. daemons (they daemonize themselves and write the pid files above)
alive /run/slurmctld.pid || slurmctld
alive /run/slurmd.pid || slurmd
for _ in $(seq 120); do
  state=$(sinfo -h -n "$HOST" -o %T 2>/dev/null || true)
  case "$state" in idle|mixed|allocated) break ;; esac
  sleep 0.5
done
sinfo
srun -t 1 true   # end-to-end check: munge, slurmctld, slurmd and step launch
echo "SLURM up on $HOST ($NODE_CPUS CPUs, $NODE_MEM_MB MB, $FAKE_GPUS fake GPUs)"
