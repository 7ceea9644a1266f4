#!/usr/bin/env bash
# jobs/sweep.sbatch on a 2-node SLURM cluster whose nodes are namespace hosts (one slurmd each,
# netns_slurm.bash): submitted on 2 nodes x 2 tasks through each launcher (srun --mpi=pmix,
# mpirun) and the automatic choice, every job completes on both nodes and writes the same results
# as a 2-rank run on one host. Then SIGUSR1 to the batch shell (what --signal=B:USR1 does) of a
# job whose 4 ranks each hold a task — 2 rank processes on each node, checked — reaches the ranks
# on both nodes through mpirun: the job exits with 4, each rank's running task done, the rest
# pending. Point-to-point traffic is TCP only (OMPI_MCA_pml=ob1, OMPI_MCA_btl=tcp,self).
# Usage: slurm.sh QSWEEP_BINARY SOURCE_DIR. Needs root and Debian's slurm-wlm (installed if
# missing); a cluster that does not start is a failure, with its logs.
source "$(dirname "$0")/multihost_lib.bash" "$@"
# shellcheck source=tests/multihost/netns_slurm.bash
source "$SOURCE_DIR/tests/multihost/netns_slurm.bash"
small=$SOURCE_DIR/tests/integration/slurm_small.yaml
long=$SOURCE_DIR/tests/integration/slurm_long.yaml
hosts_up 2
[ "$MPI_FAMILY" = openmpi ] || fail "the SLURM test across hosts runs under Open MPI (jobs/qsweep-job.sh's mpirun is Open MPI's); this build uses $MPIEXEC"
if [ "$(id -u)" -eq 0 ]; then
  bash "$SOURCE_DIR/scripts/slurm-local.sh" install || fail "could not install slurm-wlm and munge"
fi
cluster=$WORK/cluster
netns_slurm_start "$cluster" 2 || { netns_slurm_logs "$cluster"; fail "the 2-node SLURM did not start"; }
# After a failure: the cluster's logs and the jobs' own output (a rank's crash shows there).
trap 'rc=$?; if [ $rc -ne 0 ]; then netns_slurm_logs "$cluster"; tail -n 60 "$WORK"/*.log 2>/dev/null; fi; stop_releasing; end_jobs; hosts_destroy; rm -rf "$WORK"; exit $rc' EXIT
slurm() { on_host 1 "$@"; }  # client commands reach slurmctld from a host
job_field() {  # field $2 (JobState, ExitCode, NodeList) of job $1
  slurm scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}
wait_for_idle_queue() {  # at most $1 seconds
  local deadline=$((SECONDS + $1))
  while [ -n "$(slurm squeue -h -o %i)" ]; do
    [ "$SECONDS" -lt "$deadline" ] || { slurm squeue; fail "jobs still queued or running after $1 s"; }
    sleep 1
  done
}
nodes="$(host_name 1),$(host_name 2)"
nodelist="$MULTIHOST_PREFIX-$MULTIHOST_ID-h[1-2]"

use_hosts none
mpi 2 "$QSWEEP" run "$small" -o reference.h5 --quiet
# For the jobs (sbatch passes the environment on): where qsweep is, and TCP only between ranks.
export QSWEEP QSWEEP_DIR=$SOURCE_DIR OMPI_MCA_pml=ob1 OMPI_MCA_btl=tcp,self

# Jobs get 30 minutes: jobs/sweep.sbatch asks for SLURM's walltime warning 300 s before the end
# (--signal=B:USR1@300), which a shorter limit would make due at once, arriving whenever
# slurmctld next checks the limits — maybe while a job runs.
submit() {  # name, launcher (srun, mpirun, auto): a 2-node, 4-task job of the small sweep
  QSWEEP_LAUNCHER=$2 slurm sbatch --parsable --nodes=2 --ntasks-per-node=2 --ntasks=4 --time=30 \
    --nodelist="$nodes" --output="$1.log" "$SOURCE_DIR/jobs/sweep.sbatch" "$small" -o "$1.h5"
}
declare -A job
job[srun]=$(submit srun srun)
job[mpirun]=$(submit mpirun mpirun)
job[auto]=$(submit auto auto)
echo "submitted jobs ${job[srun]} (srun), ${job[mpirun]} (mpirun), ${job[auto]} (auto)"
wait_for_idle_queue 300
for run in srun mpirun auto; do
  echo "--- $run.log"
  cat "$run.log"
  outcome="$(job_field "${job[$run]}" JobState) $(job_field "${job[$run]}" ExitCode)"
  [ "$outcome" = "COMPLETED 0:0" ] || fail "job ${job[$run]} ($run): $outcome, expected COMPLETED 0:0"
  [ "$(job_field "${job[$run]}" NodeList)" = "$nodelist" ] || fail "job ${job[$run]} did not run on both nodes"
  $CHECK same reference.h5 "$run.h5"
  "$PYTHON" -c "import sys, h5py; f = h5py.File('$run.h5', 'r'); sys.exit(int(f.attrs['mpi_ranks']) != 4)" ||
    fail "$run.h5 was not written by 4 ranks"
done
grep -q 'launcher: srun --mpi=pmix --wait=120 (4 ranks)' srun.log || fail "srun.log does not show the srun launch"
grep -q 'launcher: mpirun (4 ranks)' mpirun.log || fail "mpirun.log does not show the mpirun launch"
grep -q 'launcher: srun --mpi=pmix --wait=120 (4 ranks)' auto.log || fail "auto.log: srun works here but was not chosen"

# The walltime warning on 2 nodes, through mpirun. Every task is held; once each of the 4 ranks
# holds one, the ranks are where SLURM put them: 2 on each node.
read -ra long_tasks <<<"$(sweep_task_ids "$long")"
hold_tasks hold "${long_tasks[@]}"
signal_job=$(QSWEEP_LAUNCHER=mpirun slurm sbatch --parsable --nodes=2 --ntasks-per-node=2 --ntasks=4 \
  --time=30 --nodelist="$nodes" --output=signal.log "$SOURCE_DIR/jobs/sweep.sbatch" "$long" -o signal.h5)
no_hold
running=()
for _ in 1 2 3 4; do
  # shellcheck disable=SC2119  # no launcher pid: the job runs under slurmd
  wait_started
  running+=("$STARTED_TASK")
done
for n in 1 2; do
  ranks_here=0
  for pid in $(host_pids "$n"); do
    if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = qsweep ]; then ranks_here=$((ranks_here + 1)); fi
  done
  [ "$ranks_here" -eq 2 ] || fail "$ranks_here qsweep processes on node $n, expected 2"
done
slurm scancel --batch --signal=USR1 "$signal_job"
wait_for_line signal.log "stop requested: no new tasks"
release_all
wait_for_idle_queue 120
stop_releasing
echo "--- signal.log"
grep -v 'tasks (' signal.log || true
[ "$(job_field "$signal_job" ExitCode)" = 4:0 ] ||
  fail "signalled job $signal_job: exit code $(job_field "$signal_job" ExitCode), expected 4 (incomplete)"
expect_exit 4 "$QSWEEP" status signal.h5 >/dev/null
"$PYTHON" - signal.h5 "${running[@]}" <<'PY' || fail "signal.h5 is not drained as expected"
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    status, rank = f["tasks/status"][()], f["tasks/rank"][()]
running = [int(t) for t in sys.argv[2:]]
done = status == 1
assert done[running].all(), f"the tasks running at the signal, {running}, are not all done"
assert set(rank[done].tolist()) == {0, 1, 2, 3}, f"done tasks ran on ranks {set(rank[done].tolist())}"
print(f"drained: {done.sum()} done (ranks {sorted(set(rank[done].tolist()))}), {(~done).sum()} pending")
PY
echo "PASS: jobs on 2 SLURM nodes (namespace hosts) through srun and mpirun; SIGUSR1 drained both nodes"
