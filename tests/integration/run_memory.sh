#!/usr/bin/env bash
# Memory budget of a node (docs/running.md, "Memory"): exact general tasks of N = 26 (1 GiB each
# by the 2^(N+4) estimate) and N = 24 (256 MiB) on 3 ranks of one node whose budget
# (--node-memory) fits one N = 26 task at a time. The sum of the ranks' resident memory, sampled
# from /proc until the job ends, never exceeds the budget, and the results equal those of a run
# without a budget (every rank may then hold an N = 26 task). Also: a task over
# --max-task-memory, or larger than the node, is refused before anything is written (exit 2,
# located at its block).
# Usage: run_memory.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"
SAMPLE="$PYTHON $SOURCE_DIR/tests/integration/run_memory.py"

cat >memory.yaml <<'YAML'
name: memory
blocks:
  - method: exact
    family: ring
    N: 26
    lambda: [0.3, 0.4, 0.5]
    per_type: false
  - method: exact
    family: ring
    N: 24
    lambda: [0.3, 0.4, 0.5, 0.6]
    per_type: false
YAML
budget=$((1920 << 20))  # 1.875 GiB: one N = 26 task (1 GiB), two N = 24 tasks and 3 baselines
GiB=$((1 << 30))

out=$($SAMPLE 3 -- "$QSWEEP" run memory.yaml -o budget.h5 --quiet --node-memory 1920M \
  --max-task-memory 1.25G 2>budget.log) || { cat budget.log; fail "the run with a budget failed"; }
read -r _ rounds peak <<<"$out"
echo "with a node budget of $budget bytes: peak summed RSS $peak bytes over $rounds rounds of samples"
[ "$rounds" -gt 0 ] || fail "no sample of the ranks' memory was taken"
[ "$peak" -ge "$GiB" ] || fail "the samples never saw an N = 26 task (peak $peak bytes): nothing was tested"
[ "$peak" -le "$budget" ] || fail "the ranks held $peak bytes together, more than the budget of $budget"
grep -q "ranks there idle until running tasks end" budget.log ||
  { cat budget.log; fail "no message that tasks waited for memory"; }

out=$($SAMPLE 3 -- "$QSWEEP" run memory.yaml -o free.h5 --quiet --node-memory 64G 2>free.log) ||
  { cat free.log; fail "the run without a budget failed"; }
read -r _ rounds free_peak <<<"$out"
echo "without a budget: peak summed RSS $free_peak bytes over $rounds rounds"
$CHECK same budget.h5 free.h5
grep -qE '^all +7 +7 +0 +0 +0$' <<<"$("$QSWEEP" status budget.h5)" || fail "not all 7 tasks are done"

# Refusals: exit 2, the block's location, no file.
expect_exit 2 mpi 3 "$QSWEEP" run memory.yaml -o refused.h5 --quiet --node-memory 1920M \
  --max-task-memory 512M 2>refused.log
grep -q "^qsweep: error: memory.yaml:3:5: task 0 'exact ring N=26" refused.log ||
  { cat refused.log; fail "the refusal does not name the N = 26 block"; }
grep -q "more than --max-task-memory 512 MiB (2 more tasks" refused.log ||
  { cat refused.log; fail "the refusal does not name the limit"; }
expect_exit 2 mpi 3 "$QSWEEP" run memory.yaml -o refused.h5 --quiet --node-memory 1G \
  --max-task-memory 4G 2>alone.log
grep -q "that node 0 may hold (--node-memory)" alone.log || { cat alone.log; fail "no node refusal"; }
[ ! -e refused.h5 ] || fail "a refused run wrote a file"
expect_exit 2 "$QSWEEP" run memory.yaml -o refused.h5 --node-memory 12X 2>size.log
grep -q "'12X' has an unknown unit; expected a memory size" size.log || { cat size.log; fail "bad size"; }
echo "PASS: the ranks stayed within the node budget; results equal an unconstrained run; refusals located"
