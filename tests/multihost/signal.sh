#!/usr/bin/env bash
# SIGUSR1 (SLURM's walltime warning) drains a job spread over 3 namespace hosts: every task is
# held and each of the 3 ranks (one per host) has started one, so the signal certainly finds all
# of them computing. Open MPI: sent to the launcher on host 1, which forwards it to the ranks on
# every host; MPICH's Hydra does not forward it, so there it goes to every rank (usr1_to_job).
# Once rank 0 has taken the stop (it says so) the held tasks are let go: the run exits with 4,
# the tasks each rank was running are done (their rows written by the rank's own host), the rest
# pending, and a resume from another host completes the file to the uninterrupted result.
# Usage: signal.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/multihost_lib.bash" "$@"
sweep=$SOURCE_DIR/tests/integration/run_kill.yaml
hosts_up 3

use_hosts none
mpi 2 "$QSWEEP" run "$sweep" -o reference.h5 --quiet
read -ra every_task <<<"$(task_ids reference.h5)"

spec=1:1,2:1,3:1
use_hosts "$spec"
hold_tasks hold "${every_task[@]}"
start_job -n 3 --oversubscribe "$QSWEEP" run "$sweep" -o drained.h5 --progress 0.1 2>signal.log
running=()
for _ in 1 2 3; do
  wait_started "$JOB_PID"
  running+=("$STARTED_TASK")
done
check_job_across_hosts "$JOB_PID" "$spec"
usr1_to_job "$JOB_PID"
wait_for_line signal.log "stop requested: no new tasks" "$JOB_PID"
release_all
rc=0
wait "$JOB_PID" || rc=$?
stop_releasing
no_hold
grep -v 'tasks (' signal.log || true
[ "$rc" -eq 4 ] || fail "the drained run exited with $rc, expected 4 (incomplete)"
expect_exit 4 "$QSWEEP" status drained.h5 >/dev/null
"$PYTHON" - drained.h5 "${running[@]}" <<'PY' || fail "drained.h5 is not drained as expected"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    status, rank = f["tasks/status"][()], f["tasks/rank"][()]
running = [int(t) for t in sys.argv[2:]]
done = status == 1
assert done[running].all(), f"the tasks running at the signal, {running}, are not all done"
assert set(rank[done].tolist()) == {0, 1, 2}, f"done tasks ran on ranks {set(rank[done].tolist())}"
print(f"drained: {done.sum()} done (ranks {sorted(set(rank[done].tolist()))}), {(~done).sum()} not done")
PY
use_hosts 2:1,3:1
mpi 2 "$QSWEEP" run "$sweep" -o drained.h5 --resume --quiet
$CHECK same drained.h5 reference.h5 --ignore-attempts
echo "PASS: SIGUSR1 drained a job on 3 hosts; resumed from another host to the uninterrupted result"
