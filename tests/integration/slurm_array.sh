#!/usr/bin/env bash
# jobs/sweep-array.sh on a private one-node SLURM cluster: a sweep with exact and simulate tasks
# runs as a job array of 3 elements (2 ranks each, one shard each, `qsweep run --shard I/3`) and a
# merge job that waits for them; the merged file equals a run of the whole sweep outside SLURM on
# every dataset (timings aside), bitwise. A bad K is refused before anything is submitted.
# Usage: slurm_array.sh QSWEEP_BINARY SOURCE_DIR (CTest passes both). Skips (exit 77) without SLURM.
# shellcheck source=tests/integration/slurm_lib.bash
source "$(dirname "$0")/slurm_lib.bash" "$@"

cat >study.yaml <<'YAML'
name: array
seed: 21
blocks:
  - method: exact
    family: [complete, ring]
    N: [4, 6]
    lambda: [0.3, 0.6, 0.9]
    qmax: 12
  - method: simulate
    policy: [jsq, power_of_d]
    family: complete
    d: 2
    N: 6
    lambda: [0.5, 0.8]
    horizon: 500
    warmup: 50
    replications: 2
    qmax: 10
YAML
mpirun -n 2 --oversubscribe "$QSWEEP_BIN" run study.yaml -o reference.h5 --quiet

rc=0
bash "$SOURCE_DIR/jobs/sweep-array.sh" study.yaml array.h5 0 2>bad.txt || rc=$?
[ "$rc" -eq 2 ] && grep -q "K must be at least 1" bad.txt || fail "K = 0: exit $rc, $(cat bad.txt)"
[ -z "$(squeue -h -o %i)" ] || fail "a refused K submitted jobs"

bash "$SOURCE_DIR/jobs/sweep-array.sh" study.yaml array.h5 3 --ntasks=2 --time=10 >submitted.txt
cat submitted.txt
read -r _ _ array _ <submitted.txt
merge=$(sed -n 's/.*merge job \([0-9]*\).*/\1/p' submitted.txt)
[ -n "$array" ] && [ -n "$merge" ] || fail "no job ids: $(cat submitted.txt)"
wait_for_idle_queue 600

for i in 1 2 3; do
  echo "--- element $i"
  cat "qsweep-part-${array}_$i.out"
  grep -q "qsweep: shard $i/3:" "qsweep-part-${array}_$i.out" || fail "element $i ran no shard"
  outcome="$(job_field "${array}_$i" JobState) $(job_field "${array}_$i" ExitCode)"
  [ "$outcome" = "COMPLETED 0:0" ] || fail "element $i: $outcome, expected COMPLETED 0:0"
done
echo "--- merge"
cat "qsweep-merge-$merge.out"
outcome="$(job_field "$merge" JobState) $(job_field "$merge" ExitCode)"
[ "$outcome" = "COMPLETED 0:0" ] || fail "merge job $merge: $outcome, expected COMPLETED 0:0"
check_identical_results array.h5 reference.h5
"$QSWEEP_BIN" verify array.h5 >/dev/null || fail "the merged file does not verify"
echo "PASS: a sweep as a job array of 3 shards and a dependent merge equals one run"
