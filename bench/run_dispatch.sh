#!/usr/bin/env bash
# Dispatch throughput with no-op tasks, side by side in one run:
#   bench/run_dispatch.sh [BUILD_DIR] [TASKS]
# 2 workers are: 2 ranks (rank 0 coordinates and computes on a thread) or 3 ranks with a dedicated
# coordinator (oversubscribed on a 2-core machine; the coordinator sleeps while it waits).
set -euo pipefail
build=${1:-build}
tasks=${2:-200000}
bench=$build/bench/qsweep_bench_run_dispatch
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
mpirun -n 1 "$bench" "$tasks" 3
mpirun -n 2 "$bench" "$tasks" 3
mpirun -n 3 --oversubscribe "$bench" "$tasks" 3 --dedicated-coordinator
