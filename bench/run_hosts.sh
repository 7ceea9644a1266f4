#!/usr/bin/env bash
# Dispatch throughput and parallel efficiency across 2 namespace hosts vs one host, side by side
# in one run (the hosts of tests/multihost/netns_hosts.bash: network namespaces on this machine,
# TCP between them; needs root, Open MPI):
#   bench/run_hosts.sh [BUILD_DIR] [TASKS] [REPEATS]
# Configurations, each with 2 workers (rank 0 computes too):
#   one host, shared memory   mpirun -n 2 as in bench/run_dispatch.sh (vader between the ranks)
#   one host, TCP             2 ranks on host 1, TCP only (btl tcp; the loopback of one host)
#   two hosts, TCP            1 rank on host 1, 1 on host 2, TCP only over the bridge
# Dispatch: qsweep_bench_run_dispatch (no-op tasks, rows written as in a real run), the best of
# REPEATS launches per configuration. Efficiency: the CPU-bound sweep of bench/run_efficiency.sh,
# the work phase with 2 workers / with 1 worker (ideal 0.5), and the work phase / the sum of the
# tasks' own times in the same run (which load does not skew). Configurations alternate, so
# machine noise hits all of them. The hosts share this machine's cores: the figures measure what
# crossing hosts costs, not what more cores would give. No configuration binds ranks to cores
# (--bind-to none: each namespace host would bind its rank to core 0 of the same machine).
set -euo pipefail
build=$(realpath "${1:-build}")
tasks=${2:-200000}
repeats=${3:-3}
source_dir=$(realpath "$(dirname "$0")/..")
bench=$build/bench/qsweep_bench_run_dispatch
qsweep=$build/qsweep
[ "$(id -u)" -eq 0 ] || { echo "run_hosts.sh: the namespace hosts need root" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
grep -qE "Open MPI|OpenRTE" <<<"$(mpirun --version 2>&1)" || { echo "run_hosts.sh: needs Open MPI's mpirun" >&2; exit 1; }
# shellcheck source=tests/multihost/netns_hosts.bash
source "$source_dir/tests/multihost/netns_hosts.bash"
work=$(mktemp -d /tmp/qsweep-bench-hosts.XXXXXX)
trap 'hosts_destroy; rm -rf "$work"' EXIT
hosts_create 2 >/dev/null

# launch CONFIG ARGS...: mpirun with 2 ranks placed as CONFIG says (1 rank: "single").
launch() {
  local config=$1
  shift
  case $config in
    single) mpirun -n 1 --bind-to none "$@" ;;
    shm) mpirun -n 2 --bind-to none "$@" ;;
    tcp1 | tcp2)
      local spec=1:2
      [ "$config" = tcp2 ] && spec=1:1,2:1
      hosts_launch_args openmpi "$spec"
      host_command 1
      "${HOST_COMMAND[@]}" mpirun -n 2 "${HOSTS_LAUNCH_ARGS[@]}" "$@"
      ;;
  esac
}
configs=(shm tcp1 tcp2)
declare -A title=([single]="1 rank" [shm]="one host, shared memory" [tcp1]="one host, TCP"
  [tcp2]="two hosts, TCP")

# --- dispatch throughput ----------------------------------------------------------------------
# Each configuration REPEATS times, alternating; each launch reports the best of 2 work phases.
declare -A rates
for _ in $(seq 1 "$repeats"); do
  for config in "${configs[@]}"; do
    line=$(launch "$config" "$bench" "$tasks" 2)
    rates[$config]+="$(echo "$line" | sed -nE 's/.* = ([0-9]+) tasks\/s; whole.*/\1/p') "
  done
done
highest() { tr ' ' '\n' <<<"$1" | grep . | sort -g | tail -1; }
echo "dispatch: $tasks no-op tasks, 2 workers, tasks/s of the work phase per launch; best of $repeats"
for config in "${configs[@]}"; do
  printf '  %-26s %s-> %s\n' "${title[$config]}:" "${rates[$config]}" "$(highest "${rates[$config]}")"
done
echo "  two hosts / one host (TCP):           $(echo "scale=3; $(highest "${rates[tcp2]}") / $(highest "${rates[tcp1]}")" | bc)"
echo "  two hosts / one host (shared memory): $(echo "scale=3; $(highest "${rates[tcp2]}") / $(highest "${rates[shm]}")" | bc)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# --- parallel efficiency ----------------------------------------------------------------------
cat >"$work/cpu.yaml" <<'YAML'
name: efficiency
blocks:
  - method: exact
    family: random_regular
    degree: 3
    N: 16
    graph_seed: [1, 2, 3, 4]
    lambda: {linspace: [0.1, 0.9, 40]}
    qmax: 30
YAML
# One run: "work-phase seconds / the sum of the tasks' own seconds" (160 tasks / the final
# progress line's rate; the tasks' wall_seconds from the file). The second figure does not depend
# on how hard other processes compete for the cores (ideal: 1 for 1 worker, 0.5 for 2).
run_once() {
  launch "$1" "$qsweep" run "$work/cpu.yaml" -o "$work/out.h5" --force --progress 100000 2>"$work/log"
  local work_s tasks_s
  work_s=$(echo "scale=3; 160 / $(grep -oE '[0-9.e+]+ tasks/s' "$work/log" | tail -1 | cut -d' ' -f1)" | bc -l)
  tasks_s=$(/usr/bin/python3 -c "import h5py; print(h5py.File('$work/out.h5', 'r')['tasks/wall_seconds'][()].sum())")
  echo "$work_s/$(echo "scale=3; $work_s / $tasks_s" | bc -l)"
}
declare -A runs
for _ in $(seq 1 "$repeats"); do
  for config in single "${configs[@]}"; do runs[$config]+="$(run_once "$config") "; done
done
# best FIELD RUNS: the smallest of field 1 (work seconds) or 2 (work / task seconds) of the runs.
best() { tr ' ' '\n' <<<"$2" | grep . | cut -d/ -f"$1" | sort -g | head -1; }
echo "efficiency: 160 exact tasks (random_regular N=16); per run: work-phase seconds/(work phase /"
echo "sum of the tasks' seconds); then T(2 workers) / T(1 worker) (ideal 0.5) and the best second"
echo "figure (ideal 1 for 1 worker, 0.5 for 2), best of $repeats:"
one=$(best 1 "${runs[single]}")
printf '  %-26s %s -> %s\n' "${title[single]}:" "${runs[single]}" "- / $(best 2 "${runs[single]}")"
for config in "${configs[@]}"; do
  printf '  %-26s %s -> %s / %s\n' "${title[$config]}:" "${runs[$config]}" \
    "$(echo "scale=3; $(best 1 "${runs[$config]}") / $one" | bc)" "$(best 2 "${runs[$config]}")"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
