# Shared by tests/integration/slurm_*.sh (sourced; not a test itself): the test's arguments, a
# private one-node SLURM cluster for the test (scripts/slurm-local.sh), waiting for jobs, HDF5
# checks and holding tasks (hold_lib.bash).
# Usage in a script: source "$(dirname "$0")/slurm_lib.bash" "$@"
# It sets QSWEEP_BIN and SOURCE_DIR, exports QSWEEP and QSWEEP_DIR for the job scripts, starts the
# cluster and changes to the test's scratch directory WORK.
#
# Where SLURM cannot be had (not root, packages not installable, daemons do not start) the test
# is skipped: it prints "SKIP: reason" and exits 77, which CTest reports as skipped. With
# QSWEEP_REQUIRE_SLURM=1 that is a failure instead.
set -euo pipefail
QSWEEP_BIN=$(realpath "$1")
SOURCE_DIR=$(realpath "$2")

readonly SLURM_SKIP=77
PYTHON=/usr/bin/python3  # Debian's, with h5py and numpy

skip() {
  echo "SKIP: $*"
  if [ "${QSWEEP_REQUIRE_SLURM:-0}" = 1 ]; then
    echo "FAIL: QSWEEP_REQUIRE_SLURM=1 and SLURM is not available"
    exit 1
  fi
  exit $SLURM_SKIP
}

fail() {
  echo "FAIL: $*"
  exit 1
}
# shellcheck source=tests/integration/hold_lib.bash
source "$SOURCE_DIR/tests/integration/hold_lib.bash"
# shellcheck source=tests/integration/mpi_lib.bash
source "$SOURCE_DIR/tests/integration/mpi_lib.bash"  # MPIEXEC, MPI_FAMILY, mpirun, mpi
# What the job scripts should choose for this build: srun's MPI plugin, and the mpirun of the
# build's MPI (Debian's plain `mpirun` is Open MPI's, so for MPICH the job scripts are told).
if [ "$MPI_FAMILY" = mpich ]; then
  SRUN_PLUGIN=pmi2
  export QSWEEP_MPIRUN=$MPIEXEC
else
  SRUN_PLUGIN=pmix
fi
JOB_MPIRUN=${QSWEEP_MPIRUN:-mpirun}

# Starts a cluster under a new temporary directory and sets WORK (the test's scratch directory,
# removed at exit) and SLURM_CONF. The cluster is stopped at exit, whatever happens.
start_local_slurm() {
  [ "$(id -u)" -eq 0 ] || skip "the local SLURM needs root (slurmd runs as root)"
  bash "$SOURCE_DIR/scripts/slurm-local.sh" install || skip "could not install slurm-wlm and munge"
  WORK=$(mktemp -d /tmp/qsweep-slurm-test.XXXXXX)
  CLUSTER_DIR=$WORK/cluster
  trap stop_local_slurm EXIT
  local started
  if ! started=$(bash "$SOURCE_DIR/scripts/slurm-local.sh" start "$CLUSTER_DIR" 4 2>&1); then
    echo "$started"
    skip "the local SLURM did not start on this machine (output above)"
  fi
  echo "$started"
  export SLURM_CONF=$CLUSTER_DIR/slurm.conf
}

stop_local_slurm() {
  local rc=$?
  stop_releasing
  if [ $rc -ne 0 ] && [ $rc -ne $SLURM_SKIP ] && [ -d "$CLUSTER_DIR/log" ]; then
    echo "--- SLURM logs (last lines) ---"
    tail -n 30 "$CLUSTER_DIR"/log/*.log || true
    echo "--- the jobs' output (last lines) ---"
    tail -n 40 "$WORK"/*.log 2>/dev/null || true
  fi
  [ -f "$CLUSTER_DIR/slurm.conf" ] && bash "$SOURCE_DIR/scripts/slurm-local.sh" stop "$CLUSTER_DIR"
  rm -rf "$WORK"
  exit $rc
}

# Field $2 (e.g. JobState, ExitCode) of job $1, from the controller (no accounting database).
job_field() {
  scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}

# Waits until no job of the cluster is pending or running (at most $1 seconds).
wait_for_idle_queue() {
  local limit=$1 waited=0
  while [ -n "$(squeue -h -o %i)" ]; do
    if [ $waited -ge "$limit" ]; then
      squeue
      fail "jobs still queued or running after $limit s"
    fi
    sleep 2
    waited=$((waited + 2))
  done
}

# Checks that every task in results file $1 is done (or unstable) and that the file was
# written by $2 MPI ranks.
check_complete() {
  "$PYTHON" - "$1" "$2" <<'EOF' || fail "results file $1 is not complete"
import sys
import h5py
import numpy as np

path, ranks = sys.argv[1], int(sys.argv[2])
with h5py.File(path, "r") as f:
    status = f["tasks/status"][...]
    done, unstable = 1, 3  # enum values of /tasks/status
    not_done = np.count_nonzero((status != done) & (status != unstable))
    print(f"{path}: {status.size} tasks, {not_done} not done, mpi_ranks={f.attrs['mpi_ranks']}")
    sys.exit(1 if not_done or status.size == 0 or int(f.attrs["mpi_ranks"]) != ranks else 0)
EOF
}

# Checks that results files $1 and $2 hold identical datasets, bit for bit (NaN equal to NaN),
# except the columns that measure time or record scheduling (which rank, how many attempts) and
# the row checksum, which covers them.
check_identical_results() {
  "$PYTHON" - "$1" "$2" <<'EOF' || fail "results in $1 and $2 differ"
import sys
import h5py
import numpy as np

# checksum seals each row including wall_seconds and rank, so it differs with them.
SCHEDULING = {"wall_seconds", "rank", "attempts", "checksum", "events_per_second", "cpu_seconds"}

def datasets(f):
    found = {}
    f.visititems(lambda name, obj: found.update({name: obj[...]})
                 if isinstance(obj, h5py.Dataset) and name.split("/")[-1] not in SCHEDULING else None)
    return found

with h5py.File(sys.argv[1], "r") as a, h5py.File(sys.argv[2], "r") as b:
    da, db = datasets(a), datasets(b)
if sorted(da) != sorted(db):
    print("different datasets:", sorted(set(da) ^ set(db)))
    sys.exit(1)
differing = [name for name in da
             if da[name].dtype != db[name].dtype or da[name].shape != db[name].shape
             or not np.array_equal(da[name], db[name],
                                   equal_nan=da[name].dtype.kind in "fc")]
print(f"compared {len(da)} datasets; differing: {differing or 'none'}")
sys.exit(1 if differing else 0)
EOF
}

start_local_slurm
export QSWEEP=$QSWEEP_BIN QSWEEP_DIR=$SOURCE_DIR
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
cd "$WORK"
