#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, in one folder, for trying the Slurm recipe and for the
# test that runs it (crate/cli/tests/cluster.rs): munged, slurmctld and slurmd from Debian's packages
# (munge, slurmctld, slurmd, slurm-client), on 127.0.0.1 with ports of their own, every file in DIR.
# Needs root (slurmd runs jobs as their user). Nothing outside DIR is touched.
#
#   scripts/cluster/slurm/local-cluster.sh start DIR [CPUS]   # then: export SLURM_CONF=DIR/slurm.conf
#   scripts/cluster/slurm/local-cluster.sh stop DIR
set -euo pipefail
die() { echo "local-cluster.sh: $*" >&2; exit 2; }
[ $# -ge 2 ] || die "usage: local-cluster.sh start|stop DIR [CPUS]"
cmd=$1
mkdir -p "$2"
dir=$(cd "$2" && pwd)

stop() {
  # The cluster's jobs first (slurmstepd outlives slurmd), then the daemons.
  if [ -f "$dir/slurm.conf" ] && SLURM_CONF="$dir/slurm.conf" squeue -h -o %A >/dev/null 2>&1; then
    SLURM_CONF="$dir/slurm.conf" scancel --quiet --user="$(id -un)" 2>/dev/null || true
    for _ in $(seq 1 40); do
      [ -z "$(SLURM_CONF="$dir/slurm.conf" squeue -h -o %A 2>/dev/null)" ] && break
      sleep 0.25
    done
  fi
  for pid in "$dir/run/slurmd.pid" "$dir/run/slurmctld.pid" "$dir/munge/munged.pid"; do
    [ -s "$pid" ] && kill "$(cat "$pid")" 2>/dev/null || true
  done
}

case "$cmd" in
  stop) stop; exit 0 ;;
  start) ;;
  *) die "usage: local-cluster.sh start|stop DIR [CPUS]" ;;
esac

for b in munged slurmctld slurmd sbatch sinfo; do
  command -v "$b" >/dev/null || die "$b is not installed (apt-get install munge slurmctld slurmd slurm-client)"
done
[ "$(id -u)" = 0 ] || die "slurmd needs root to run jobs"
cpus=${3:-$(nproc)}
host=$(hostname)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

mkdir -p "$dir/state" "$dir/spool" "$dir/log" "$dir/run" "$dir/munge"
chmod 700 "$dir/munge"
[ -s "$dir/munge/munge.key" ] || { head -c 1024 /dev/urandom >"$dir/munge/munge.key"; chmod 400 "$dir/munge/munge.key"; }
cat >"$dir/slurm.conf" <<CONF
ClusterName=rocketjudge-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
# No cgroups or systemd: processes are tracked by their parent, CPUs are counted, not pinned.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
# Finished jobs stay visible to scontrol for an hour (no accounting database here).
MinJobAge=3600
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=local Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF

stop
munged --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" --pid-file="$dir/munge/munged.pid" \
  --seed-file="$dir/munge/seed" --log-file="$dir/log/munged.log"
export SLURM_CONF="$dir/slurm.conf"
slurmctld -i -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 1 60); do
  if [ "$(sinfo -h -o %T 2>/dev/null)" = idle ]; then
    echo "export SLURM_CONF=$SLURM_CONF"
    exit 0
  fi
  sleep 0.5
done
echo "local-cluster.sh: the node did not come up in 30 s; logs in $dir/log:" >&2
tail -n 20 "$dir"/log/*.log >&2
stop
exit 1
