# A SLURM cluster on the namespace hosts of netns_hosts.bash (sourced; not a test itself): one
# slurmd per host (node name = the host's hostname, address = its 10.213.0.N), slurmctld and
# munged on host 1, all state under a directory. The ports are SLURM's defaults: each host has a
# network of its own, so they collide with nothing. Client commands run on a host (on_host 1
# sbatch ...) with SLURM_CONF set; daemons end with their hosts (hosts_destroy).
#   netns_slurm_start DIR CPUS   config, munge key, daemons; waits until every node is idle
#   netns_slurm_logs DIR         the last lines of every log (after a failure)
# Needs root and Debian's slurm-wlm and munge (scripts/slurm-local.sh install).

netns_slurm_config() {
  local dir=$1 cpus=$2 n nodes
  nodes=$(host_name 1)
  for ((n = 2; n <= MULTIHOST_COUNT; n++)); do nodes+=",$(host_name "$n")"; done
  cat <<EOF
# Written by tests/multihost/netns_slurm.bash: a $MULTIHOST_COUNT-node test cluster on namespace hosts.
ClusterName=qsweep-multihost
SlurmctldHost=$(host_name 1)($(host_addr 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
# One slurmd per node on one machine: each keeps its files apart (%n: the node's name).
SlurmdSpoolDir=$dir/spool/%n
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmdLogFile=$dir/log/slurmd-%n.log
# Each node's own (slurmd runs with this directory bound over by one of its own, as a node's
# local /tmp): srun --mpi=pmix keeps per-step directories here, named by job and step alone.
TmpFS=$dir/tmp
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmctldLogFile=$dir/log/slurmctld.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
OverTimeLimit=0
KillWait=5
MinJobAge=3600
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=60
EOF
  for ((n = 1; n <= MULTIHOST_COUNT; n++)); do
    echo "NodeName=$(host_name "$n") NodeAddr=$(host_addr "$n") CPUs=$cpus State=UNKNOWN"
  done
  echo "PartitionName=hosts Nodes=$nodes Default=YES MaxTime=INFINITE State=UP"
}

netns_slurm_start() {
  local dir=$1 cpus=$2 n tries state
  for tool in munged slurmctld slurmd sinfo sbatch; do
    command -v "$tool" >/dev/null || { echo "netns_slurm: $tool not found"; return 1; }
  done
  mkdir -p "$dir"
  chmod 0700 "$dir"  # munged refuses key and socket directories that others can write
  mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/tmp" "$dir/run" "$dir/log"
  chmod 0700 "$dir/munge"
  for ((n = 1; n <= MULTIHOST_COUNT; n++)); do mkdir -p "$dir/spool/$(host_name "$n")"; done
  netns_slurm_config "$dir" "$cpus" >"$dir/slurm.conf"
  export SLURM_CONF=$dir/slurm.conf
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 0400 "$dir/munge/munge.key"
  # Each daemon forks into the background once it is set up.
  on_host 1 munged --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munged.seed" --origin="$(host_addr 1)" --force || return 1
  on_host 1 slurmctld -f "$SLURM_CONF" -i || return 1
  for ((n = 1; n <= MULTIHOST_COUNT; n++)); do
    mkdir -p "$dir/node-tmp/h$n"
    # A mount namespace of slurmd's own, gone with its last process.
    # shellcheck disable=SC2016  # expanded by the inner bash
    on_host "$n" unshare --mount --propagation private bash -c \
      'mount --bind "$1" "$2" && exec slurmd -f "$SLURM_CONF" -N "$3"' \
      slurmd "$dir/node-tmp/h$n" "$dir/tmp" "$(host_name "$n")" || return 1
  done
  for ((tries = 0; tries < 120; tries++)); do
    state=$(on_host 1 sinfo -h -N -o %T 2>/dev/null | sort -u | tr '\n' ' ')
    [ "$state" = "idle " ] && break
    sleep 0.5
  done
  if [ "$state" != "idle " ]; then
    echo "netns_slurm: the nodes did not all become idle (states: '${state:-none}')"
    return 1
  fi
  echo "netns_slurm: $MULTIHOST_COUNT nodes idle ($(on_host 1 sinfo -h -o '%N %c CPUs'))"
}

netns_slurm_logs() {
  tail -n 30 "$1"/log/*.log 2>/dev/null || true
}
