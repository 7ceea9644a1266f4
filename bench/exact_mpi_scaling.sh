#!/usr/bin/env bash
# Strong scaling of the distributed general engine (docs/exact.md, "Distributed general engine"):
# the reachable unions of the instance, the single-rank engine, then the distributed one on 1, 2
# and 3 ranks, at each N given (even: the instance is a 3-regular graph). One JSON line per run;
# `uptime` before and after.
# Usage: bench/exact_mpi_scaling.sh BUILD_DIR [N ...] (default N: 24 26)
#   BUDGET_MIB=M: every run's data segment capped at M MiB per rank (RLIMIT_DATA); a run that
#   needs more prints an "out of memory" line instead of its figures.
set -euo pipefail
build=${1:?usage: exact_mpi_scaling.sh BUILD_DIR [N ...]}
shift
if [ $# -gt 0 ]; then sizes=("$@"); else sizes=(24 26); fi
program=$build/bench/qsweep_bench_exact_mpi_scaling
mpiexec=${QSWEEP_MPIEXEC:-mpiexec}
# Open MPI as root (MPICH ignores these); waiting ranks yield their core instead of spinning,
# which on a shared 2-core machine would take it from the rank being waited for.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
extra=()
if grep -qiE "open ?mpi|openrte" <<<"$("$mpiexec" --version 2>&1)"; then extra=(--oversubscribe); fi
budget=(${BUDGET_MIB:+"$BUDGET_MIB"})
run() {  # N ranks mode
  "$mpiexec" -n "$2" "${extra[@]}" "$program" "$1" "$3" "${budget[@]}" 2>/dev/null ||
    echo "{\"N\": $1, \"engine\": \"$3\", \"ranks\": $2, \"budget_MiB\": ${BUDGET_MIB:-0}, \"result\": \"out of memory or failed\"}"
}
uptime
for N in "${sizes[@]}"; do
  run "$N" 1 reachable
  run "$N" 1 single
  for ranks in 1 2 3; do run "$N" "$ranks" distributed; done
done
uptime
