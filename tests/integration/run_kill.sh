#!/usr/bin/env bash
# kill -9 of the whole job (mpirun and every rank) at several moments, resuming after each kill:
# the file opens after every kill, the final file equals an uninterrupted run, and only the tasks
# in flight at each kill ran again (the attempts column shows it). The moments are events, not
# delays: the first kill comes while rank 0 is reading the sweep file (a named pipe), before any
# file exists; each later one once a held task (QSWEEP_TEST_HOLD) has started, a task picked at
# random among those not done yet, so that the kill certainly catches it in flight.
# Usage: run_kill.sh QSWEEP_BINARY SOURCE_DIR   (QSWEEP_KILL_SEED=N repeats a choice of tasks)
source "$(dirname "$0")/run_lib.bash" "$@"
sweep=$SOURCE_DIR/tests/integration/run_kill.yaml
RANDOM=${QSWEEP_KILL_SEED:-$$}
echo "held tasks from QSWEEP_KILL_SEED=${QSWEEP_KILL_SEED:-$$}"

mpi 2 "$QSWEEP" run "$sweep" -o reference.h5 --quiet
read -ra unfinished <<<"$(task_ids reference.h5)"

# --- kill 1: during start-up, rank 0 has opened the sweep file and read nothing yet ------------
mkfifo sweep.fifo
start_job -n 2 --oversubscribe "$QSWEEP" run sweep.fifo -o killed.h5 --quiet
# The writer's open returns once rank 0 has opened the pipe for reading; the writer then keeps it
# open (writing nothing) until the kill.
timeout "$HOLD_TIMEOUT" bash -c 'exec 3>sweep.fifo; touch opened; exec sleep infinity' &
writer=$!
until [ -e opened ]; do
  kill -0 "$JOB_PID" 2>/dev/null || fail "the run ended before it opened the sweep file"
  kill -0 "$writer" 2>/dev/null || fail "rank 0 did not open the sweep file within $HOLD_TIMEOUT s"
  sleep 0.05
done
kill_job
kill "$writer" 2>/dev/null || true
wait "$writer" 2>/dev/null || true
[ ! -e killed.h5 ] && [ ! -e killed.h5.partial ] || fail "a kill before the plan was read left a file"
echo "kill 1 during start-up: no file"

# --- kills 2-5: each once a held task has started --------------------------------------------
snapshots=()
kills=1
for round in 1 2 3 4; do
  # Three tasks not done yet, at random: the first of them the scheduler hands out holds its
  # rank's batch; the run cannot finish before it starts.
  held=()
  for _ in 1 2 3; do held+=("${unfinished[RANDOM % ${#unfinished[@]}]}"); done
  hold_tasks hold "${held[@]}"
  start_job -n 2 --oversubscribe "$QSWEEP" run "$sweep" -o killed.h5 --quiet --resume 2>resume.log
  wait_started "$JOB_PID"
  kill_job
  kills=$((kills + 1))
  grep -v "does not exist yet: starting it" resume.log || true
  $CHECK opens killed.h5 >/dev/null || fail "killed.h5 does not open after kill $kills"
  $CHECK snapshot killed.h5 "snapshot$kills.npz"
  snapshots+=("snapshot$kills.npz")
  read -ra unfinished <<<"$(unfinished_ids killed.h5)"
  [[ " ${unfinished[*]} " == *" $STARTED_TASK "* ]] || fail "held task $STARTED_TASK is done after kill $kills"
  echo "kill $kills once task $STARTED_TASK (held: ${held[*]}) started: the file opens," \
    "${#unfinished[@]} tasks not done"
done
no_hold
mpi 2 "$QSWEEP" run "$sweep" -o killed.h5 --resume --quiet
# Every kill after start-up caught at least its held task in flight.
$CHECK resumed killed.h5 reference.h5 "${snapshots[@]}" --min-kills-in-flight "${#snapshots[@]}"
echo "PASS: $kills kills, resumed to the uninterrupted result"
