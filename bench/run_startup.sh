#!/usr/bin/env bash
# Start-up of `qsweep run` on 10^6 tiny tasks by two binaries side by side (issue 14):
#   bench/run_startup.sh BEFORE_QSWEEP AFTER_QSWEEP [ROUNDS] [RANKS...]
# The sweep is bench/sweeps/exact1e6.yaml (tests/integration/run_scale.yaml at 10^6 loads, as
# bench/plan_scale.sh plans it). Each round starts `mpirun -n R --oversubscribe qsweep run` with
# each binary in turn, for each R of RANKS (default 2 3), holding task 0 (QSWEEP_TEST_HOLD,
# docs/running.md "Testing hooks"): the time printed is from launch to the moment task 0
# announces that it starts (planning, creating the results file, the first dispatch), with the
# 1-minute load average before each pair. The run is then stopped (SIGTERM).
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

# startup BINARY RANKS: seconds from launch to task 0 starting.
startup() {
  rm -f "$work/out.h5"
  local begin end id
  begin=$(date +%s.%N)
  mpirun -n "$2" --oversubscribe "$1" run "$sweep" -o "$work/out.h5" --quiet \
    >"$work/log" 2>&1 &
  mpirun_pid=$!
  read -r -t 600 -u "$started" id || { cat "$work/log" >&2; echo "task 0 never started" >&2; exit 1; }
  end=$(date +%s.%N)
  [ "$id" = 0 ] || { echo "task $id announced, not 0" >&2; exit 1; }
  kill -TERM "$mpirun_pid"
  wait "$mpirun_pid" || true
  mpirun_pid=
  echo "$end - $begin" | bc
}

printf '%-6s %-7s %10s %6s\n' ranks binary "start s" load
for _ in $(seq 1 "$rounds"); do
  for ranks in "${ranks_list[@]}"; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    for which in before after; do
      binary=$before
      [ "$which" = after ] && binary=$after
      printf '%-6s %-7s %10.2f %6s\n' "$ranks" "$which" "$(startup "$binary" "$ranks")" "$load"
    done
  done
done
