#!/usr/bin/env bash
# Dispatch throughput with no-op tasks, every configuration side by side:
#   bench/run_dispatch.sh [BUILD_DIR] [TASKS] [ROUNDS] [REPEATS]
# Each round launches every configuration once (in turn, so that machine noise hits all of them)
# and each launch runs REPEATS work phases. Per configuration: the median, min and max tasks/s
# over all ROUNDS x REPEATS work phases with the 1-minute load averages seen, and the parallel
# efficiency median / (workers x median of 1 rank). 3 ranks are oversubscribed on a 2-core
# machine (the coordinator and idle workers sleep while they wait).
set -euo pipefail
build=${1:-build}
tasks=${2:-200000}
rounds=${3:-3}
repeats=${4:-3}
bench=$build/bench/qsweep_bench_run_dispatch
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# name:ranks:workers:flag
configs=(
  "1 rank:1:1:"
  "2 ranks, rank 0 computes too:2:2:"
  "2 ranks, dedicated coordinator:2:1:--dedicated-coordinator"
  "3 ranks, dedicated coordinator:3:2:--dedicated-coordinator"
  "3 ranks, rank 0 computes too:3:3:"
)
for round in $(seq 1 "$rounds"); do
  for i in "${!configs[@]}"; do
    IFS=: read -r _ ranks _ flag <<<"${configs[$i]}"
    # shellcheck disable=SC2086  # flag is empty or one word
    mpirun -n "$ranks" --oversubscribe "$bench" "$tasks" "$repeats" $flag >"$work/out"
    grep ': repeat ' "$work/out" >>"$work/config$i"
    echo "round $round: $(tail -1 "$work/out")"
  done
done
# Field values of the repeat lines: "... = RATE tasks/s (load LOAD); ..."
rates() { grep -oE '[0-9.e+]+ tasks/s' "$1" | cut -d' ' -f1 | sort -g; }
loads() { grep -oE '\(load [0-9.]+\)' "$1" | tr -d '()' | cut -d' ' -f2 | sort -g; }
median() { awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
one=$(rates "$work/config0" | median)
echo
echo "$tasks no-op tasks, $rounds rounds x $repeats repeats; tasks/s of the work phase:"
printf '%-42s %8s %8s %8s %7s  %s\n' configuration median min max effic. "load (1 min)"
for i in "${!configs[@]}"; do
  IFS=: read -r name _ workers _ <<<"${configs[$i]}"
  med=$(rates "$work/config$i" | median)
  printf '%-42s %8.3g %8.3g %8.3g %7.2f  %s-%s\n' "$name ($workers workers)" "$med" \
    "$(rates "$work/config$i" | head -1)" "$(rates "$work/config$i" | tail -1)" \
    "$(awk -v m="$med" -v w="$workers" -v one="$one" 'BEGIN { print m / (w * one) }')" \
    "$(loads "$work/config$i" | head -1)" "$(loads "$work/config$i" | tail -1)"
done
echo "efficiency = median / (workers x median of 1 rank); 1 worker is ideal 1.00"
