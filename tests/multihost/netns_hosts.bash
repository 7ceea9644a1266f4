# Several "hosts" on this machine for tests/multihost (sourced; not a test itself). Each host is a
# Linux network namespace with its own UTS namespace (its own hostname), its eth0 on a private
# bridge; all hosts share the file system (the "shared file system" of a cluster) and the pid
# space. The bridge lives in a namespace of its own, so the root namespace's network is never
# touched: no interface, address or route is added there, and only the addresses made here
# (10.213.0.N/24, reachable from the hosts alone) are ever a target.
#
#   hosts_create COUNT    makes hosts 1..COUNT (needs root); cleans up a killed earlier run's
#   hosts_destroy         kills every process left in the hosts, removes everything made
#   on_host N CMD...      runs CMD on host N (its network, hostname, TMPDIR; environment kept)
#   host_command N        sets HOST_COMMAND: the words of on_host, for a command that must be
#                         the started process itself (env and nsenter exec, they do not fork)
#   hosts_launch_args FAMILY SPEC   sets HOSTS_LAUNCH_ARGS and HOSTS_LAUNCH_ENV: what an MPI
#                         launcher (FAMILY openmpi or mpich) needs to place ranks as SPEC says
#   host_addr N, host_name N, host_pids N
#
# Names carry the pid of the shell that made them (MULTIHOST_ID, default $$), so parallel runs do
# not collide; state (the UTS namespace files, each host's TMPDIR, the owner) is under
# $MULTIHOST_BASE/$MULTIHOST_ID. tests/multihost/netns-rsh is the "ssh" of these hosts for MPI
# launchers: it reads $QSWEEP_NETNS_DIR/hosts/HOST (HOST: address, hostname or number).
MULTIHOST_BASE=/run/qsweep-multihost
MULTIHOST_PREFIX=qsmh
MULTIHOST_SUBNET=10.213.0.0/24
NETNS_RSH=$(realpath "$(dirname "${BASH_SOURCE[0]}")/netns-rsh")

host_addr() { echo "10.213.0.$1"; }
host_name() { echo "$MULTIHOST_PREFIX-$MULTIHOST_ID-h$1"; }
host_pids() { ip netns pids "$(host_name "$1")" 2>/dev/null || true; }

host_command() {
  HOST_COMMAND=(env TMPDIR="$MULTIHOST_DIR/tmp/h$1" nsenter --net="/run/netns/$(host_name "$1")"
    --uts="$MULTIHOST_DIR/uts/h$1")
}

on_host() {
  local HOST_COMMAND
  host_command "$1"
  shift
  "${HOST_COMMAND[@]}" "$@"
}

# hosts_launch_args FAMILY SPEC: SPEC "1:2,3:1" is 2 slots on host 1, then 1 on host 3 (filled in
# that order: rank 0 on the first). Open MPI: the rsh agent netns-rsh starts the daemons of the
# other hosts; point-to-point traffic over TCP only (pml ob1, btl tcp: no shared memory, no UCX)
# on the hosts' subnet; no binding to cores (every host would bind its first rank to core 0 of
# the one machine they share). MPICH's Hydra: the same agent through its ssh launcher, control
# connections on eth0; in HOSTS_LAUNCH_ENV (for Hydra's environment, which it passes to every
# rank) UCX on TCP alone and every process treated as on another node (MPIR_CVAR_NOLOCAL: no
# shared memory either). netns-rsh passes no environment: Open MPI's ranks get only what -x names.
# shellcheck disable=SC2034  # the results are for the caller
hosts_launch_args() {
  local family=$1 entry list=()
  for entry in ${2//,/ }; do list+=("$(host_addr "${entry%%:*}"):${entry##*:}"); done
  local IFS=,
  if [ "$family" = openmpi ]; then
    # shellcheck disable=SC2054  # commas inside words (btl tcp,self)
    HOSTS_LAUNCH_ARGS=(--host "${list[*]}" --mca plm_rsh_agent "$NETNS_RSH" --mca pml ob1
      --mca btl tcp,self --mca btl_tcp_if_include "$MULTIHOST_SUBNET"
      --mca oob_tcp_if_include "$MULTIHOST_SUBNET" --bind-to none)
    HOSTS_LAUNCH_ENV=()
  else
    HOSTS_LAUNCH_ARGS=(-launcher ssh -launcher-exec "$NETNS_RSH" -hosts "${list[*]}" -iface eth0)
    HOSTS_LAUNCH_ENV=(UCX_TLS=tcp UCX_NET_DEVICES=eth0 MPIR_CVAR_NOLOCAL=1)
  fi
}

# Host $1 reaches address $2: a TCP connection to its port 9 is answered (refused counts).
host_reaches() {
  local out
  # shellcheck disable=SC2016  # $0 is the inner shell's
  out=$(on_host "$1" timeout 2 bash -c ': </dev/tcp/$0/9' "$2" 2>&1) && return 0
  [[ "$out" == *refused* ]]
}

# The start time of process $1 (field 22 of /proc/PID/stat), empty if there is no such process.
process_start_time() {
  sed -E 's/^.*\) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20
}

# Removes the namespaces, mounts and files of run ID (its processes killed first). Only names of
# the form $MULTIHOST_PREFIX-ID-* are ever removed.
remove_run() {
  local id=$1 dir=$MULTIHOST_BASE/$1 netns pid
  for netns in $(ip netns list | cut -d' ' -f1 | grep -E "^$MULTIHOST_PREFIX-$id-(h[0-9]+|net)\$"); do
    for pid in $(ip netns pids "$netns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    # The namespace goes once its last process is gone; the name can go at once.
    ip netns delete "$netns" 2>/dev/null || true
  done
  if [ -d "$dir" ]; then
    for netns in "$dir"/uts/*; do
      [ -e "$netns" ] || continue
      umount "$netns" 2>/dev/null || true
    done
    rm -rf "$dir"
  fi
}

# Runs left behind by a killed test (its owner is gone), and anything of an earlier run that had
# this run's id (a reused pid).
remove_stale_runs() {
  local id owner start ids
  ids=$( (ip netns list | cut -d' ' -f1 | sed -nE "s/^$MULTIHOST_PREFIX-([0-9]+)-(h[0-9]+|net)\$/\1/p"
    ls "$MULTIHOST_BASE" 2>/dev/null || true) | sort -u)
  for id in $ids; do
    [[ "$id" =~ ^[0-9]+$ ]] || continue
    if [ "$id" != "$MULTIHOST_ID" ] && [ -f "$MULTIHOST_BASE/$id/owner" ]; then
      read -r owner start <"$MULTIHOST_BASE/$id/owner" || true
      [ "$(process_start_time "$owner")" = "$start" ] && continue  # a run still going
    elif [ "$id" != "$MULTIHOST_ID" ] && [ -n "$(process_start_time "$id")" ]; then
      continue  # just being made by a live run (no owner file yet)
    fi
    echo "netns_hosts: removing leftovers of an earlier run ($MULTIHOST_PREFIX-$id-*)"
    remove_run "$id"
  done
}

# Fails (with the reason) unless this machine can make namespace hosts.
hosts_prerequisites() {
  [ "$(id -u)" -eq 0 ] || { echo "netns_hosts: needs root (network namespaces)"; return 1; }
  local tool
  for tool in ip nsenter unshare ss; do
    command -v "$tool" >/dev/null || { echo "netns_hosts: $tool not found"; return 1; }
  done
}

hosts_create() {
  local count=$1 n netns net
  MULTIHOST_ID=${MULTIHOST_ID:-$$}
  MULTIHOST_DIR=$MULTIHOST_BASE/$MULTIHOST_ID
  # shellcheck disable=SC2034  # for the sourcing scripts
  MULTIHOST_COUNT=$count
  hosts_prerequisites || return 1
  remove_stale_runs
  mkdir -p "$MULTIHOST_DIR/uts" "$MULTIHOST_DIR/hosts"
  echo "$$ $(process_start_time $$)" >"$MULTIHOST_DIR/owner"
  export QSWEEP_NETNS_DIR=$MULTIHOST_DIR
  net=$MULTIHOST_PREFIX-$MULTIHOST_ID-net
  ip netns add "$net" || return 1
  ip -n "$net" link add br0 type bridge || return 1
  ip -n "$net" link set br0 up || return 1
  for ((n = 1; n <= count; n++)); do
    netns=$(host_name "$n")
    ip netns add "$netns" || return 1
    # Both ends are made inside the namespaces: the root namespace never sees them.
    ip -n "$net" link add "h$n" type veth peer name eth0 netns "$netns" || return 1
    ip -n "$net" link set "h$n" master br0 up || return 1
    ip -n "$netns" addr add "$(host_addr "$n")/24" dev eth0 || return 1
    ip -n "$netns" link set eth0 up || return 1
    ip -n "$netns" link set lo up || return 1
    touch "$MULTIHOST_DIR/uts/h$n"
    unshare --uts="$MULTIHOST_DIR/uts/h$n" hostname "$netns" || return 1
    mkdir -p "$MULTIHOST_DIR/tmp/h$n"
    # netns-rsh finds a host by number, address or name.
    for alias in "$n" "$(host_addr "$n")" "$netns"; do
      echo "$n $netns" >"$MULTIHOST_DIR/hosts/$alias"
    done
  done
  # Every host reaches every other (links come up asynchronously: wait for it, bounded).
  local other tries
  for ((n = 1; n <= count; n++)); do
    for ((other = 1; other <= count; other++)); do
      tries=0
      until host_reaches "$n" "$(host_addr "$other")"; do
        tries=$((tries + 1))
        [ "$tries" -lt 100 ] || { echo "netns_hosts: host $n cannot reach host $other"; return 1; }
        sleep 0.1
      done
    done
  done
  echo "netns_hosts: hosts $(host_name 1)..$(host_name "$count") at $(host_addr 1)..$(host_addr "$count")"
}

hosts_destroy() {
  [ -n "${MULTIHOST_ID:-}" ] || return 0
  remove_run "$MULTIHOST_ID"
}
