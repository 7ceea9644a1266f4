#!/usr/bin/env bash
# Errors outside a task end the whole job, never hang it: a full disk while the results file is
# created makes the failing rank print the HDF5 call and cause, and MPI_Abort ends every rank
# (exit 1, no results file under the final name and no .partial left); a rank killed mid-run ends the job too, and the
# file it leaves is resumed to the uninterrupted result.
# Usage: run_abort.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"

# --- a rank dies: the job ends, the file resumes ---------------------------------------------
# Every task is held, so the rank dies while the run is certainly running (a held task started).
long=$SOURCE_DIR/tests/integration/run_kill.yaml
mpi 2 "$QSWEEP" run "$long" -o reference.h5 --quiet
read -ra every_task <<<"$(task_ids reference.h5)"
hold_tasks hold "${every_task[@]}"
start_job -n 3 --oversubscribe "$QSWEEP" run "$long" -o died.h5 --progress 0.1 2>died.log
wait_started "$JOB_PID"
no_hold
victim=$(job_ranks "$JOB_PID" | tail -1)
kill -9 $victim
rc=0
timeout 60 tail --pid="$JOB_PID" -f /dev/null || rc=$?
[ "$rc" -eq 0 ] || { kill_job; fail "the job hung after one rank died"; }
wait "$JOB_PID" && fail "the job exited with 0 after a rank died" || true
mpi 2 "$QSWEEP" run "$long" -o died.h5 --resume --quiet
$CHECK same died.h5 reference.h5 --ignore-attempts

# --- no space left while creating the file: MPI_Abort with a message ---------------------------
mkdir full
if ! mount -t tmpfs -o size=1m tmpfs full 2>/dev/null; then
  echo "SKIP (part): cannot mount a small tmpfs here; the full-disk check did not run"
  echo "PASS: a dead rank ends the job and the file resumes"
  exit 0
fi
trap 'stop_releasing; end_jobs; umount "$WORK/full" 2>/dev/null; rm -rf "$WORK"' EXIT
rc=0
# Help messages not aggregated: the aggregation now and then loses the MPI_ABORT message.
launch_command -n 3 --oversubscribe --mca orte_base_help_aggregate 0 "$QSWEEP" run \
  "$SOURCE_DIR/tests/integration/run_scale.yaml" -o full/out.h5 --quiet
timeout 120 "${LAUNCH[@]}" >abort.log 2>&1 || rc=$?
cat abort.log | grep -v '^-\+$' | head -20
[ "$rc" -ne 124 ] || fail "the job hung after an I/O error"
[ "$rc" -eq 1 ] || fail "exit code $rc after an I/O error, expected 1"
grep -qE "qsweep: rank [0-9]: error: H5[A-Za-z0-9]+\(/?[A-Za-z0-9_./]+\) failed: .*(No space left|write failed|unable)" abort.log ||
  fail "no message naming the failed HDF5 call and its object"
# Open MPI's words, then MPICH's.
grep -qE "MPI_ABORT was invoked|application called MPI_Abort" abort.log || fail "the job was not ended with MPI_Abort"
[ ! -e full/out.h5 ] || fail "a half-made file got the final name"
[ ! -e full/out.h5.partial ] || fail "the failed creation left full/out.h5.partial behind"
echo "PASS: a dead rank ends the job and the file resumes; an I/O error aborts with a message"
