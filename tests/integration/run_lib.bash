# Shared by tests/integration/run_*.sh (sourced; not a test itself): arguments, a scratch
# directory removed at exit, mpirun for root on 2 cores, starting / killing a whole job, and
# holding tasks at known moments (hold_lib.bash: hold_tasks, wait_started, release, ...).
# Usage in a script: source "$(dirname "$0")/run_lib.bash" "$@"
set -euo pipefail
QSWEEP=$(realpath "$1")
SOURCE_DIR=$(realpath "$2")
PYTHON=/usr/bin/python3  # Debian's, with h5py and numpy
CHECK="$PYTHON $SOURCE_DIR/tests/integration/results_check.py"
WORK=$(mktemp -d /tmp/qsweep-run-test.XXXXXX)
# A failed check must not leave a job behind (a held task would keep it, and ctest, waiting).
# A failed check must not leave a job behind (a held task would keep it, and ctest, waiting):
# this shell's running background jobs and their children are killed.
end_jobs() {
  local pid
  for pid in $(jobs -pr); do
    # shellcheck disable=SC2046
    kill -9 "$pid" $(ps -o pid= --ppid "$pid" || true) 2>/dev/null || true
  done
}
trap 'stop_releasing; end_jobs; rm -rf "$WORK"' EXIT
cd "$WORK"
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

fail() {
  echo "FAIL: $*"
  exit 1
}
# shellcheck source=tests/integration/hold_lib.bash
source "$SOURCE_DIR/tests/integration/hold_lib.bash"

# mpirun with RANKS ranks (more ranks than cores is fine: --oversubscribe).
mpi() {
  local ranks=$1
  shift
  mpirun -n "$ranks" --oversubscribe "$@"
}

# Runs a command, expects exit code $1.
expect_exit() {
  local expected=$1 rc=0
  shift
  "$@" || rc=$?
  [ "$rc" -eq "$expected" ] || fail "exit code $rc (expected $expected) from: $*"
}

# Starts `mpirun ARGS...` in the background; JOB_PID is mpirun's pid.
start_job() {
  mpirun "$@" &
  JOB_PID=$!
}

# kill -9 of the whole job at once: mpirun and its ranks (Open MPI gives each rank a process
# group of its own, so the ranks are found as mpirun's children, by pid).
kill_job() {
  local ranks
  ranks=$(ps -o pid= --ppid "$JOB_PID" | tr '\n' ' ')
  # shellcheck disable=SC2086
  kill -9 "$JOB_PID" $ranks 2>/dev/null || true
  wait "$JOB_PID" 2>/dev/null || true
  for pid in $ranks; do
    while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
  done
}
