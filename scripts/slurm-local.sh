#!/usr/bin/env bash
# A single-machine SLURM cluster for tests: one controller and one compute node on this host.
#
#   scripts/slurm-local.sh install          install Debian's slurm-wlm and munge (only if missing)
#   scripts/slurm-local.sh start DIR [CPUS] write a config under DIR (created; must be empty),
#                                            start munged, slurmctld and slurmd, wait until the node
#                                            is idle; CPUS is the node's CPU count (default 4, more
#                                            than the cores so multi-rank jobs fit on small machines)
#   scripts/slurm-local.sh stop DIR         cancel the cluster's jobs, stop its daemons (by pid)
#                                            and remove DIR
#
# Everything (config, munge key and socket, spool, state, logs, pid files) lives under DIR, so
# several clusters can coexist with the machine's own SLURM and nothing is left behind.
# Client commands find the cluster through SLURM_CONF=DIR/slurm.conf (printed by `start`).
# Needs root (SlurmUser=root, as slurmd must run as root anyway).
set -euo pipefail

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

install_packages() {
  local missing=() p
  for p in slurm-wlm munge; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" -eq 0 ] || { echo "slurm-local: installing ${missing[*]} needs root" >&2; return 1; }
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # The packages try to start their services; without systemd that fails harmlessly.
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "slurm-local: installed ${missing[*]}"
}

# Prints a TCP port on 127.0.0.1 with nothing listening on it or on the next port.
free_port_pair() {
  local port
  for ((port = 16817; port < 17817; port += 2)); do
    if ! (: >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && ! (: >"/dev/tcp/127.0.0.1/$((port + 1))") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  echo "slurm-local: no free port pair in 16817..17817" >&2
  return 1
}

write_config() {
  local dir=$1 cpus=$2 node=$3 port=$4
  cat >"$dir/slurm.conf" <<EOF
# Written by scripts/slurm-local.sh: a one-node test cluster; all state under $dir.
ClusterName=qsweep-local
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
# srun --mpi=pmix keeps its per-step directories under TmpFS.
TmpFS=$dir/tmp
MailProg=/bin/true
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
# No cgroups, no accounting database: plain process tracking works in containers and VMs.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# Trust the CPU count below even where the machine has fewer cores.
SlurmdParameters=config_overrides
ReturnToService=2
# Walltime is enforced exactly (no grace) and SIGKILL follows SIGTERM after 5 s, so tests that
# hit the limit stay short. Finished jobs stay visible to scontrol for an hour.
OverTimeLimit=0
KillWait=5
MinJobAge=3600
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=60
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
}

# Kills the process in pid file $1 if it is still the daemon named $2, waiting for it to exit.
stop_daemon() {
  local pidfile=$1 name=$2 pid i
  [ -f "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  [ -n "$pid" ] && [ -d "/proc/$pid" ] || return 0
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "$name" || return 0  # the pid was reused
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < 100; i++)); do
    [ -d "/proc/$pid" ] || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

start_cluster() {
  local dir=$1 cpus=$2 node port i state
  [ "$(id -u)" -eq 0 ] || { echo "slurm-local: start needs root" >&2; return 1; }
  for cmd in munged slurmctld slurmd sinfo; do
    command -v "$cmd" >/dev/null || { echo "slurm-local: $cmd not found (run: $0 install)" >&2; return 1; }
  done
  if [ -e "$dir" ] && [ -n "$(ls -A "$dir")" ]; then
    echo "slurm-local: $dir exists and is not empty (stop that cluster first)" >&2
    return 1
  fi
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  chmod 0700 "$dir"  # munged refuses key and socket directories that others can write
  mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/tmp" "$dir/run" "$dir/log"
  chmod 0700 "$dir/munge"
  node=$(hostname -s)
  port=$(free_port_pair)
  write_config "$dir" "$cpus" "$node" "$port"

  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 0400 "$dir/munge/munge.key"
  export SLURM_CONF=$dir/slurm.conf
  state=none
  # Each daemon forks into the background once it is set up (slurmctld -i: no old state to read).
  if munged --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
      --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
      --seed-file="$dir/munge/munged.seed" --force &&
    slurmctld -f "$SLURM_CONF" -i && slurmd -f "$SLURM_CONF" -N "$node"; then
    for ((i = 0; i < 60; i++)); do
      state=$(sinfo -h -N -n "$node" -o %T 2>/dev/null || true)
      [ "$state" = idle ] && break
      sleep 0.5
    done
  fi
  if [ "$state" != idle ]; then
    echo "slurm-local: node $node did not become idle (state: '${state:-none}'); logs in $dir/log" >&2
    tail -n 20 "$dir"/log/*.log >&2 || true
    stop_cluster "$dir" keep
    return 1
  fi
  echo "slurm-local: cluster up (node $node, $cpus CPUs, port $port)"
  echo "export SLURM_CONF=$SLURM_CONF"
}

# Second argument "keep" leaves DIR in place (for reading the logs after a failed start).
stop_cluster() {
  local dir=$1 keep=${2:-} i
  [ -f "$dir/slurm.conf" ] || { echo "slurm-local: no cluster in $dir" >&2; return 1; }
  export SLURM_CONF=$dir/slurm.conf
  # Jobs first: their processes are not children of slurmd and would outlive it.
  if [ -f "$dir/run/slurmctld.pid" ] && scontrol ping >/dev/null 2>&1; then
    for ((i = 0; i < 100; i++)); do
      [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
      squeue -h -o %i | xargs -r scancel 2>/dev/null || true
      sleep 0.2
    done
  fi
  stop_daemon "$dir/run/slurmd.pid" slurmd
  stop_daemon "$dir/run/slurmctld.pid" slurmctld
  stop_daemon "$dir/run/munged.pid" munged
  [ "$keep" = keep ] || rm -rf "$dir"
}

case "${1:-}" in
  install) install_packages ;;
  start) [ $# -ge 2 ] || usage; start_cluster "$2" "${3:-4}" ;;
  stop) [ $# -eq 2 ] || usage; stop_cluster "$2" ;;
  *) usage ;;
esac
