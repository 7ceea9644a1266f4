#!/usr/bin/env bash
# `qsweep plan` of three sweeps of 10^6 tasks by two binaries side by side (issue 14, goal 3):
#   bench/plan_scale.sh BEFORE_QSWEEP AFTER_QSWEEP [ROUNDS]
# The sweeps are in bench/sweeps: exact1e6 (tiny exact tasks, tests/integration/run_scale.yaml
# at 10^6 loads); simulate1e6 (jsq and power_of_d on complete and ring, N 10..100, 25 000
# loads); mixed1e6 (half each: exact on ring and complete, N 4..13, loads up to 1.2, a sixth
# unstable). Each round runs every sweep with both binaries in turn and prints CPU seconds
# (user + system), wall seconds and peak RSS, with the 1-minute load average before each pair,
# and whether both print the same plan (the line with the process's own memory aside: it is
# measured).
set -euo pipefail
before=${1:?usage: plan_scale.sh BEFORE_QSWEEP AFTER_QSWEEP [ROUNDS]}
after=${2:?usage: plan_scale.sh BEFORE_QSWEEP AFTER_QSWEEP [ROUNDS]}
rounds=${3:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sweeps=$(dirname "$0")/sweeps
printf '%-9s %-7s %8s %8s %9s %6s %s\n' sweep binary "CPU s" "wall s" "peak MB" load "same plan"
for _ in $(seq 1 "$rounds"); do
  for sweep in exact simulate mixed; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    for which in before after; do
      binary=$before
      [ "$which" = after ] && binary=$after
      /usr/bin/time -f "%U %S %e %M" -o "$work/time" "$binary" plan "$sweeps/${sweep}1e6.yaml" |
        grep -v "this process holds" >"$work/$which.out"
      read -r user sys wall kb <"$work/time"
      same=""
      [ "$which" = after ] && { cmp -s "$work/before.out" "$work/after.out" && same=yes || same=NO; }
      printf '%-9s %-7s %8.2f %8.2f %9.0f %6s %s\n' "$sweep" "$which" \
        "$(echo "$user + $sys" | bc)" "$wall" "$(echo "$kb / 1000" | bc)" "$load" "$same"
    done
  done
done
