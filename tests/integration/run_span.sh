#!/usr/bin/env bash
# Tasks that span ranks (sweep key `ranks`, docs/running.md "Tasks that span ranks"), mixed with
# ordinary tasks on 4 ranks: the results equal those of the same plan on one rank per task (to
# 1e-12 relative: the distributed engine sums in another order); while a spanning task runs, rank
# 0 lists it on the two ranks of its group; kill -9 of the whole job while it runs, then
# --resume, gives the uninterrupted file (bitwise: on the same number of ranks the sums are taken
# in the same order); and bad values of `ranks` are refused with their place.
# Usage: run_span.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"
sweep=$SOURCE_DIR/tests/integration/run_span.yaml
spanning=0  # the first task of the block with `ranks: 2`, the first spanning task handed out

mpi 4 "$QSWEEP" run "$sweep" -o reference.h5 --quiet
sed 's/ranks: 2/ranks: 1/' "$sweep" >one_rank.yaml
mpi 2 "$QSWEEP" run one_rank.yaml -o one_rank.h5 --quiet
$CHECK close reference.h5 one_rank.h5 --rtol 1e-12
echo "spanning tasks on 2 ranks equal the same tasks on 1 rank"

# --- a kill -9 while a spanning task runs -------------------------------------------------------
hold_tasks hold "$spanning"
start_job -n 4 --oversubscribe "$QSWEEP" run "$sweep" -o killed.h5 --quiet
wait_started "$JOB_PID"
[ "$STARTED_TASK" = "$spanning" ] || fail "held task $STARTED_TASK started, expected $spanning"
# Rank 0 writes killed.h5.activity when the running tasks change: both members list the task.
members=0
for ((waited = 0; waited < HOLD_TIMEOUT * 20; waited++)); do
  members=$(grep -cE "^rank [1-9][0-9]* .* tasks $spanning\$" killed.h5.activity 2>/dev/null || true)
  [ "$members" -ge 2 ] && break
  kill -0 "$JOB_PID" 2>/dev/null || fail "the run ended while task $spanning was held"
  sleep 0.05
done
[ "$members" -eq 2 ] || fail "task $spanning is listed on $members ranks, expected 2"
kill_job
no_hold
$CHECK opens killed.h5 >/dev/null || fail "killed.h5 does not open after the kill"
$CHECK snapshot killed.h5 snapshot.npz
mpi 4 "$QSWEEP" run "$sweep" -o killed.h5 --resume --quiet
$CHECK resumed killed.h5 reference.h5 snapshot.npz --min-kills-in-flight 1
echo "killed while task $spanning ran on 2 ranks, resumed to the uninterrupted result"

# --- bad values ----------------------------------------------------------------------------------
sed 's/ranks: 2/ranks: 3/' "$sweep" >three.yaml
expect_exit 2 mpi 3 "$QSWEEP" run three.yaml -o three.h5 --quiet 2>three.log
grep -q "three.yaml:[0-9]*:[0-9]*: task 0 .* asks for 3 ranks and this run has 2" three.log ||
  fail "no located message for 3 ranks on a run of 3: $(cat three.log)"
[ ! -e three.h5 ] || fail "a refused run left three.h5"
sed 's/ranks: auto/ranks: 2/' "$sweep" >symmetric.yaml
expect_exit 2 "$QSWEEP" plan symmetric.yaml 2>symmetric.log
grep -q "symmetric.yaml:[0-9]*:[0-9]*: ranks is 2, but only the general engine" symmetric.log ||
  fail "no located message for ranks on the symmetric engine: $(cat symmetric.log)"
sed 's/ranks: 2/ranks: 0/' "$sweep" >zero.yaml
expect_exit 2 "$QSWEEP" plan zero.yaml 2>zero.log
grep -q "zero.yaml:[0-9]*:[0-9]*: ranks is 0; expected an integer >= 1 or auto" zero.log ||
  fail "no located message for ranks: 0: $(cat zero.log)"
expect_exit 2 "$QSWEEP" eval --family ring --N 8 --lambda 0.5 --ranks 2 2>eval.log
grep -q "^qsweep: .*--ranks: qsweep eval runs a task in this one process" eval.log ||
  fail "eval --ranks 2 not refused clearly: $(cat eval.log)"
echo "PASS"
