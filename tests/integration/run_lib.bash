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
# A failed check must not leave a job behind (a held task would keep it, and ctest, waiting):
# this shell's running background jobs and their children are killed.
end_jobs() {
  local pid
  for pid in $(jobs -pr); do
    # shellcheck disable=SC2046
    kill -9 "$pid" $(descendants "$pid" || true) 2>/dev/null || true
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

# shellcheck source=tests/integration/mpi_lib.bash
source "$SOURCE_DIR/tests/integration/mpi_lib.bash"  # MPIEXEC, MPI_FAMILY, launch_command, mpirun, mpi

# Runs a command, expects exit code $1.
expect_exit() {
  local expected=$1 rc=0
  shift
  "$@" || rc=$?
  [ "$rc" -eq "$expected" ] || fail "exit code $rc (expected $expected) from: $*"
}

# Starts `mpirun ARGS...` in the background; JOB_PID is mpirun's pid.
start_job() {
  launch_command "$@"
  "${LAUNCH[@]}" & # not the mpirun function: JOB_PID is the launcher's, not a subshell's
  JOB_PID=$!
}

# The processes under PID, at any depth (Open MPI's ranks are mpirun's children; MPICH's are
# children of a hydra_pmi_proxy under mpiexec).
descendants() {
  local child
  for child in $(ps -o pid= --ppid "$1"); do
    echo "$child"
    descendants "$child"
  done
}

# The ranks of the job under launcher PID: the processes under it with none under them.
job_ranks() {
  local pid
  for pid in $(descendants "$1"); do
    [ -n "$(ps -o pid= --ppid "$pid")" ] || echo "$pid"
  done
}

# Whether process PID is running (it exists and is not a zombie waiting to be reaped).
running() {
  local state
  state=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
  [[ $state != Z* ]]
}

# wait_ended PID...: waits until none of the processes is running (at most HOLD_TIMEOUT seconds).
# Open MPI's mpirun exits after a signal of its own without waiting for its ranks.
wait_ended() {
  local pid deadline=$((SECONDS + HOLD_TIMEOUT))
  for pid in "$@"; do
    while running "$pid"; do
      [ "$SECONDS" -lt "$deadline" ] || fail "process $pid still running $HOLD_TIMEOUT s after its launcher ended"
      sleep 0.05
    done
  done
}

# SIGUSR1 to every rank of the job under launcher $1, the way jobs/qsweep-job.sh sends the walltime
# warning: through Open MPI's mpirun, which forwards it; under MPICH straight to the ranks (the job
# script signals Hydra's job step through SLURM, because Hydra's own forwarding loses the ranks'
# exit code: docs/cluster.md).
usr1_to_job() {
  if [ "$MPI_FAMILY" = openmpi ]; then
    kill -USR1 "$1"
  else
    # shellcheck disable=SC2046  # one pid per word
    kill -USR1 $(job_ranks "$1")
  fi
}

# kill -9 of the whole job at once: mpirun and every process under it (Open MPI gives each rank a
# process group of its own, so they are found by parent pid).
kill_job() {
  local ranks
  ranks=$(descendants "$JOB_PID" | tr '\n' ' ')
  # shellcheck disable=SC2086
  kill -9 "$JOB_PID" $ranks 2>/dev/null || true
  wait "$JOB_PID" 2>/dev/null || true
  for pid in $ranks; do
    while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
  done
}
