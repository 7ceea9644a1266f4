#!/usr/bin/env bash
# Pre-faulted reuse of the exact general engine's block (docs/exact.md, "Performance"): one worker
# (mpirun -n 2 --dedicated-coordinator) runs TASKS random 3-regular tasks of N servers, with the
# build in BEFORE and in AFTER alternating, ROUNDS times; prints per rank user, system and wall
# time and peak RSS (/usr/bin/time), and the load average before each run:
#   bash bench/exact_reuse.sh BEFORE_QSWEEP AFTER_QSWEEP [N] [TASKS] [ROUNDS]
set -euo pipefail
before=$(realpath "$1")
after=$(realpath "$2")
N=${3:-26}
tasks=${4:-6}
rounds=${5:-2}
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/reuse.yaml" <<YAML
name: exact-reuse
blocks:
  - method: exact
    family: random_regular
    degree: 3
    graph_seed: 1
    N: $N
    rho: {linspace: [0.5, 0.9, $tasks]}
    qmax: 0
YAML
for round in $(seq 1 "$rounds"); do
  for which in before after; do
    qsweep=$before
    [ "$which" = after ] && qsweep=$after
    echo "round $round, $which, load $(cut -d' ' -f1-3 /proc/loadavg)"
    # shellcheck disable=SC2016  # expanded by each rank's shell
    mpirun -n 2 sh -c '/usr/bin/time -f "  rank $OMPI_COMM_WORLD_RANK: %U user %S sys %e wall %M KiB" "$@"' \
      sh "$qsweep" run "$work/reuse.yaml" -o "$work/out.h5" --force -q --dedicated-coordinator
  done
done
