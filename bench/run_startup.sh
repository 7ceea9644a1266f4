#!/usr/bin/env bash
# Start-up of `qsweep run` on 10^6 tiny tasks by two binaries side by side (issue 14):
#   bench/run_startup.sh BEFORE_QSWEEP AFTER_QSWEEP [ROUNDS] [RANKS...]
# The sweep is bench/sweeps/exact1e6.yaml (tests/integration/run_scale.yaml at 10^6 loads, as
# bench/plan_scale.sh plans it). Each round starts `mpirun -n R --oversubscribe qsweep run` with
# each binary in turn, for each R of RANKS (default 2 3), holding task 0 (QSWEEP_TEST_HOLD,
# docs/running.md "Testing hooks"): the time printed is from launch to the moment task 0
# announces that it starts (planning, creating the results file, the first dispatch), with the
# 1-minute load average before each pair. At that moment the script reads the peak resident set
# (VmHWM of /proc/PID/status) of rank 0, the coordinator, and the largest of the other ranks':
# the ranks are mpirun's descendants, told apart by the rank in their environment
# (OMPI_COMM_WORLD_RANK, or PMIX_RANK / PMI_RANK). The run is then stopped (SIGTERM). Each start
# follows a sync.
set -euo pipefail
before=${1:?usage: run_startup.sh BEFORE_QSWEEP AFTER_QSWEEP [ROUNDS] [RANKS...]}
after=${2:?usage: run_startup.sh BEFORE_QSWEEP AFTER_QSWEEP [ROUNDS] [RANKS...]}
rounds=${3:-3}
shift $(($# < 3 ? $# : 3))
ranks_list=("$@")
[ "$#" -gt 0 ] || ranks_list=(2 3)
sweep=$(dirname "$0")/sweeps/exact1e6.yaml
work=$(mktemp -d)
mpirun_pid=
cleanup() {
  [ -z "$mpirun_pid" ] || kill "$mpirun_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkfifo "$work/started" "$work/release"
exec {started}<>"$work/started"  # read-write: opens at once, never sees end of file
export QSWEEP_TEST_HOLD="$work:0"

# descendants PID: the processes below PID, recursively.
descendants() {
  local child
  for child in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
    echo "$child"
    descendants "$child"
  done
}

# peaks PID BINARY: "RANK0_MB OTHERS_MB", the peak resident set (VmHWM) of rank 0 and the largest of
# the other ranks among the descendants of PID (mpirun) that run BINARY.
peaks() {
  local pid rank kb rank0=0 others=0
  for pid in $(descendants "$1"); do
    [ "$(readlink /proc/"$pid"/exe 2>/dev/null)" = "$(readlink -f "$2")" ] || continue
    rank=$(tr '\0' '\n' </proc/"$pid"/environ 2>/dev/null |
      sed -n 's/^\(OMPI_COMM_WORLD_RANK\|PMIX_RANK\|PMI_RANK\)=//p' | head -n 1)
    kb=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/"$pid"/status 2>/dev/null)
    [ -n "$rank" ] && [ -n "$kb" ] || continue
    if [ "$rank" = 0 ]; then rank0=$kb; elif [ "$kb" -gt "$others" ]; then others=$kb; fi
  done
  [ "$rank0" -gt 0 ] || { echo "no rank 0 of $2 found below mpirun (pid $1)" >&2; exit 1; }
  echo "$((rank0 / 1000)) $((others / 1000))"
}

# startup BINARY RANKS: "SECONDS RANK0_MB OTHERS_MB": seconds from launch to task 0 starting,
# and the peak resident sets then.
startup() {
  rm -f "$work/out.h5"
  # The previous start's file leaves hundreds of MB of dirty pages: written back now, not while
  # this start writes its own (which made starts 1 s slower at random).
  sync
  local begin end id
  begin=$(date +%s.%N)
  mpirun -n "$2" --oversubscribe "$1" run "$sweep" -o "$work/out.h5" --quiet \
    >"$work/log" 2>&1 &
  mpirun_pid=$!
  read -r -t 600 -u "$started" id || { cat "$work/log" >&2; echo "task 0 never started" >&2; exit 1; }
  end=$(date +%s.%N)
  [ "$id" = 0 ] || { echo "task $id announced, not 0" >&2; exit 1; }
  local memory
  memory=$(peaks "$mpirun_pid" "$1")
  kill -TERM "$mpirun_pid"
  wait "$mpirun_pid" || true
  mpirun_pid=
  echo "$(echo "$end - $begin" | bc) $memory"
}

printf '%-6s %-7s %10s %14s %14s %6s\n' ranks binary "start s" "rank 0 peak MB" \
  "others peak MB" load
for _ in $(seq 1 "$rounds"); do
  for ranks in "${ranks_list[@]}"; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    for which in before after; do
      binary=$before
      [ "$which" = after ] && binary=$after
      result=$(startup "$binary" "$ranks")
      read -r seconds rank0 others <<<"$result"
      printf '%-6s %-7s %10.2f %14s %14s %6s\n' "$ranks" "$which" "$seconds" "$rank0" "$others" \
        "$load"
    done
  done
done
