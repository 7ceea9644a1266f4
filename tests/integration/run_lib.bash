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

# `mpirun` in these scripts is the launcher of the MPI qsweep is built with: QSWEEP_MPIEXEC
# (tests/CMakeLists.txt sets it), else the mpirun on PATH. The scripts give Open MPI's flags; for
# MPICH's Hydra, which oversubscribes and passes the whole environment to every rank by default
# and knows neither flag, --oversubscribe, -x VAR and --mca NAME VALUE are left out.
export QSWEEP_MPIEXEC=${QSWEEP_MPIEXEC:-$(type -P mpirun)}
MPIEXEC=$QSWEEP_MPIEXEC
if "$MPIEXEC" --version 2>&1 | grep -qE "Open MPI|OpenRTE"; then MPI_FAMILY=openmpi; else MPI_FAMILY=mpich; fi
# launch_command ARGS... sets LAUNCH to that command (for `timeout "${LAUNCH[@]}"`).
launch_command() {
  LAUNCH=("$MPIEXEC")
  if [ "$MPI_FAMILY" = openmpi ]; then
    LAUNCH+=("$@")
    return
  fi
  while [ $# -gt 0 ]; do
    case "$1" in
      --oversubscribe) shift ;;
      -x) shift 2 ;;
      --mca) shift 3 ;;
      *) LAUNCH+=("$1"); shift ;;
    esac
  done
}
mpirun() {
  launch_command "$@"
  "${LAUNCH[@]}"
}

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

# SIGUSR1 "to the launcher" (SLURM's walltime warning): Open MPI's mpirun forwards it to every
# rank; MPICH's Hydra mpiexec does not (it dies of it and leaves the ranks running), so there it
# goes to the ranks, as srun or SLURM without --signal=B: send it.
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
