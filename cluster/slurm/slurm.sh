#!/usr/bin/env bash
# A single-node SLURM cluster from Debian's packages, for tests and CI (needs root).
# usage: cluster/slurm/slurm.sh up|down|status STATE_DIR
# As root it runs without cgroups (linuxproc proctrack, no task plugin) and without an
# accounting database, which is why profiles/slurm sets `slurm-status-command: squeue`.
set -euo pipefail
cmd=${1:?up|down|status}
state=$(realpath -m "${2:?state dir}")
conf="$state/slurm.conf"
host=$(hostname -s)

install_packages() {
  command -v slurmctld >/dev/null && command -v munged >/dev/null && return
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
}

write_conf() {
  local cpus mem
  cpus=$(nproc)
  mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 2048 ))
  mkdir -p "$state/ctld" "$state/d" "$state/log"
  cat > "$conf" <<CONF
ClusterName=dlbench
SlurmctldHost=$host
SlurmctldPort=$((6817 + RANDOM % 100))
SlurmdPort=$((6917 + RANDOM % 100))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MpiDefault=none
ReturnToService=2
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/d
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
SchedulerParameters=sched_interval=2
MinJobAge=300
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
}

start_munge() {
  pgrep -x munged >/dev/null && return
  [ -s /etc/munge/munge.key ] || /usr/sbin/mungekey --create >/dev/null 2>&1 || create-munge-key -f
  mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null || true
  if id munge >/dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged
  else
    /usr/sbin/munged --force
  fi
}

up() {
  install_packages
  write_conf
  # Job steps (srun inside sbatch) read the standard location, not the daemons' -f file.
  mkdir -p /etc/slurm && ln -sf "$conf" /etc/slurm/slurm.conf
  start_munge
  SLURM_CONF=$conf slurmctld -f "$conf"
  SLURM_CONF=$conf slurmd -f "$conf"
  for _ in $(seq 60); do
    if SLURM_CONF=$conf sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
      echo "SLURM_CONF=$conf"
      return 0
    fi
    sleep 1
  done
  echo "slurm did not come up; logs in $state/log" >&2
  return 1
}

down() {
  for pidfile in "$state/slurmd.pid" "$state/slurmctld.pid"; do
    [ -s "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
  done
  # A standard config naming a controller that is gone makes every later `scontrol show
  # config` (the SLURM executor plugin runs it whenever Snakemake starts) retry for 9 s.
  if [ "$(readlink /etc/slurm/slurm.conf 2>/dev/null)" = "$conf" ]; then
    rm -f /etc/slurm/slurm.conf
  fi
}

case $cmd in
  up) up ;;
  down) down ;;
  status) SLURM_CONF=$conf sinfo ;;
  *) echo "usage: $0 up|down|status STATE_DIR" >&2; exit 2 ;;
esac
