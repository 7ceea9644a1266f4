#!/usr/bin/env bash
# Parallel efficiency of `qsweep run` on a CPU-bound exact sweep, measured side by side:
#   bench/run_efficiency.sh [BUILD_DIR] [REPEATS]
# wall time with 2 workers / wall time with 1 worker (ideal 0.5; target at most 0.55), for
#   rank 0 computing too:     mpirun -n 2   vs  mpirun -n 1
#   dedicated coordinator:    mpirun -n 3   vs  mpirun -n 2   (--dedicated-coordinator)
# Runs alternate (1, 2, 1, 2, ...) so machine noise hits both; the best of REPEATS is compared.
set -euo pipefail
build=${1:-build}
repeats=${2:-3}
qsweep=$(realpath "$build/qsweep")
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
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
run() {  # ranks, extra args; prints "wall_seconds work_seconds work/sum_of_task_seconds"
  local start end rate work_s tasks_s
  start=$(date +%s%N)
  # Only the final progress line (its rate is over the work phase, after file creation).
  mpirun -n "$1" --oversubscribe "$qsweep" run "$work/cpu.yaml" -o "$work/out.h5" --force \
    --progress 100000 "${@:2}" 2>"$work/log"
  end=$(date +%s%N)
  rate=$(grep -oE '[0-9.e+]+ tasks/s' "$work/log" | tail -1 | cut -d' ' -f1)
  work_s=$(echo "scale=3; 160 / $rate" | bc -l)
  tasks_s=$(/usr/bin/python3 -c "import h5py; print(h5py.File('$work/out.h5', 'r')['tasks/wall_seconds'][()].sum())")
  echo "$(echo "scale=3; ($end - $start) / 1000000000" | bc) $work_s $(echo "scale=3; $work_s / $tasks_s" | bc -l)"
}
# Best of the runs of one configuration: field 1 wall, field 2 work phase.
best() { local field=$1; shift; printf '%s\n' "$@" | cut -d' ' -f"$field" | sort -g | head -1; }
ratio() { echo "scale=3; $1 / $2" | bc; }
one=() two=() two_d=() three_d=()
for _ in $(seq 1 "$repeats"); do
  one+=("$(run 1)")
  two+=("$(run 2)")
  two_d+=("$(run 2 --dedicated-coordinator)")
  three_d+=("$(run 3 --dedicated-coordinator)")
done
echo "160 exact tasks (random_regular N=16); per run: wall seconds (mpirun start-up and file"
echo "creation included), work-phase seconds, work phase / sum of the tasks' own seconds:"
printf '  %-44s %s\n' "1 rank  (1 worker):" "$(printf '%s  ' "${one[@]}")" \
  "2 ranks (2 workers, rank 0 computes too):" "$(printf '%s  ' "${two[@]}")" \
  "2 ranks (1 worker, dedicated coordinator):" "$(printf '%s  ' "${two_d[@]}")" \
  "3 ranks (2 workers, dedicated coordinator):" "$(printf '%s  ' "${three_d[@]}")"
echo "efficiency T(2 workers) / T(1 worker), best of $repeats (ideal 0.5, target <= 0.55): wall / work"
echo "  rank 0 computing:      $(ratio "$(best 1 "${two[@]}")" "$(best 1 "${one[@]}")") / $(ratio "$(best 2 "${two[@]}")" "$(best 2 "${one[@]}")")"
echo "  dedicated coordinator: $(ratio "$(best 1 "${three_d[@]}")" "$(best 1 "${two_d[@]}")") / $(ratio "$(best 2 "${three_d[@]}")" "$(best 2 "${two_d[@]}")")"
# On a shared machine a task's own time grows with the load (1 rank competes worse than 2), which
# skews the ratios above; work phase / sum of task seconds of the same run does not depend on it
# (ideal: 1 for 1 worker, 0.5 for 2).
echo "work phase / sum of task seconds in the same run, best of $repeats (ideal 1 and 0.5):"
echo "  1 worker: $(best 3 "${one[@]}") (rank 0), $(best 3 "${two_d[@]}") (dedicated)"
echo "  2 workers: $(best 3 "${two[@]}") (rank 0 computes), $(best 3 "${three_d[@]}") (dedicated)"
