# Holding tasks of a run at known moments (sourced by run_lib.bash and slurm_lib.bash; not a test
# itself). Uses the testing hook QSWEEP_TEST_HOLD=DIR:ID[,ID...] (docs/running.md, "Testing
# hooks"): a compute thread about to run a listed task writes "ID" to the named pipe DIR/started,
# then waits until DIR/release is opened for writing and closed. So a test interrupts a run while
# it is certainly running, whatever the speed of the machine. Every wait here is on an event,
# bounded only by HOLD_TIMEOUT seconds for a run that hangs or died.
# Needs fail() from the sourcing library.
HOLD_TIMEOUT=${HOLD_TIMEOUT:-300}

# hold_tasks DIR ID...: DIR (made afresh) gets the two pipes; exports QSWEEP_TEST_HOLD so that the
# runs started from now on hold the tasks ID... (Open MPI's mpirun hands its environment to local
# ranks; `mpirun -x QSWEEP_TEST_HOLD` for remote ones). DIR/started stays open for reading in
# this shell, so a held task never waits to announce itself and no announcement is lost when
# several tasks are held at once; wait_started reads them one by one.
hold_tasks() {
  local dir=$1
  shift
  [ "$#" -gt 0 ] || fail "hold_tasks $dir: no task ids"
  stop_releasing
  if [ -n "${HOLD_FD:-}" ]; then exec {HOLD_FD}<&-; fi
  rm -rf "$dir"
  mkdir -p "$dir"
  mkfifo "$dir/started" "$dir/release"
  HOLD_DIR=$(realpath "$dir")
  exec {HOLD_FD}<>"$HOLD_DIR/started"  # read-write: opens at once and never sees end of file
  local IFS=,
  export QSWEEP_TEST_HOLD="$HOLD_DIR:$*"
}

# no_hold: runs started from now on hold nothing (a held task of a running job still waits).
no_hold() {
  unset QSWEEP_TEST_HOLD
}

# wait_started [PID]: waits until a held task announced itself and sets STARTED_TASK to its id.
# With PID (e.g. "$JOB_PID"), fails as soon as that process has ended without an announcement.
# A read whose 1 s timeout strikes in the middle of a line keeps the part it read (the next read
# returns the rest), so the parts are joined.
wait_started() {
  local pid=${1:-} waited=0 part
  STARTED_TASK=
  [ -n "${HOLD_FD:-}" ] || fail "wait_started before hold_tasks"
  until read -r -t 1 -u "$HOLD_FD" part; do
    STARTED_TASK+=$part
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
      fail "the run (pid $pid) ended before a held task started"
    fi
    waited=$((waited + 1))
    [ "$waited" -lt "$HOLD_TIMEOUT" ] || fail "no held task started within $HOLD_TIMEOUT s"
  done
  STARTED_TASK+=$part
  [[ "$STARTED_TASK" =~ ^[0-9]+$ ]] || fail "a held task announced '$STARTED_TASK', not a task id"
}

# release: lets go the held tasks waiting now (returns once at least one has taken the release).
release() {
  timeout "$HOLD_TIMEOUT" bash -c ': >"$1"' release "$HOLD_DIR/release" ||
    fail "no held task took the release within $HOLD_TIMEOUT s"
}

# release_all: from now on every held task goes on at once (a background loop that keeps
# releasing), until stop_releasing or the next hold_tasks.
release_all() {
  stop_releasing
  (while :; do : >"$HOLD_DIR/release"; done) &
  RELEASER_PID=$!
}

stop_releasing() {
  if [ -n "${RELEASER_PID:-}" ]; then
    kill "$RELEASER_PID" 2>/dev/null || true
    wait "$RELEASER_PID" 2>/dev/null || true
    RELEASER_PID=
  fi
}

# wait_for_line FILE REGEX [PID]: waits until a line of FILE matches REGEX (grep -E), e.g. a
# message a run prints when it has taken a signal. With PID, fails once that process has ended
# and the line is still missing.
wait_for_line() {
  local file=$1 regex=$2 pid=${3:-} deadline=$((SECONDS + HOLD_TIMEOUT))
  until grep -qE "$regex" "$file" 2>/dev/null; do
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
      grep -qE "$regex" "$file" 2>/dev/null && return 0
      fail "the run (pid $pid) ended without printing /$regex/ to $file"
    fi
    [ "$SECONDS" -lt "$deadline" ] || fail "no line /$regex/ in $file within $HOLD_TIMEOUT s"
    sleep 0.05
  done
}

# unfinished_ids FILE: the ids of the tasks of results file FILE that are not done (one line,
# space separated).
unfinished_ids() {
  "$PYTHON" -c 'import sys, h5py, numpy as np
status = h5py.File(sys.argv[1], "r")["tasks/status"][()]
print(" ".join(map(str, np.flatnonzero(status != 1))))' "$1"
}

# task_ids FILE: every task id of results file FILE (one line, space separated).
task_ids() {
  "$PYTHON" -c 'import sys, h5py
print(" ".join(map(str, range(h5py.File(sys.argv[1], "r")["tasks/status"].size))))' "$1"
}

# sweep_task_ids SWEEP: every task id of sweep file SWEEP (from `qsweep plan`; needs QSWEEP).
sweep_task_ids() {
  local count
  count=$("$QSWEEP" plan "$1" | sed -n 's/^sweep .*: \([0-9][0-9]*\) tasks$/\1/p')
  [ -n "$count" ] || fail "qsweep plan $1 shows no task count"
  seq -s ' ' 0 $((count - 1))
}
