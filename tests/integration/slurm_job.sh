#!/usr/bin/env bash
# jobs/sweep.sbatch on a private one-node SLURM cluster: submitted with sbatch through each
# launcher (srun with the plugin of qsweep's MPI: --mpi=pmix for Open MPI, pmi2 for MPICH; the
# mpirun of qsweep's MPI: Open MPI's mpirun or MPICH's Hydra mpiexec) and the automatic choice,
# the job runs the sweep on the 3 ranks SLURM allocated and writes the same results as a run
# outside SLURM on 2 ranks; the automatic choice falls back to mpirun where srun gives no MPI ranks
# (srun --mpi=none); the other MPI family's mpirun is refused by the job script (exit 1, a
# message); qsweep started without a launcher in a 3-task job refuses to run (exit 2, no file);
# SIGUSR1 sent to the batch shell reaches the ranks through mpirun (Open MPI) or their job step
# (Hydra), and they stop with "incomplete" (the moment chosen by a held task: hold_lib.bash).
# Usage: slurm_job.sh QSWEEP_BINARY SOURCE_DIR (CTest passes both). Skips (exit 77) without SLURM.
# shellcheck source=tests/integration/slurm_lib.bash
source "$(dirname "$0")/slurm_lib.bash" "$@"
sweep=$SOURCE_DIR/tests/integration/slurm_small.yaml

mpirun -n 2 --oversubscribe "$QSWEEP_BIN" run "$sweep" -o reference.h5 --quiet
check_complete reference.h5 2

# --time=30: jobs/sweep.sbatch asks for USR1 300 s before the limit; a shorter limit would send it
# at slurmctld's next check, mid-job on a slow machine.
# Each launcher explicitly, the automatic choice, the automatic choice where srun gives no MPI
# ranks, and the classic mis-launch: qsweep without a launcher in a batch job of 3 tasks.
srun_job=$(QSWEEP_LAUNCHER=srun sbatch --parsable --ntasks=3 --time=30 --output=srun.log \
  "$SOURCE_DIR/jobs/sweep.sbatch" "$sweep" -o srun.h5)
mpirun_job=$(QSWEEP_LAUNCHER=mpirun sbatch --parsable --ntasks=3 --time=30 --output=mpirun.log \
  "$SOURCE_DIR/jobs/sweep.sbatch" "$sweep" -o mpirun.h5)
auto_job=$(sbatch --parsable --ntasks=3 --time=30 --output=auto.log \
  "$SOURCE_DIR/jobs/sweep.sbatch" "$sweep" -o auto.h5)
fallback_job=$(QSWEEP_SRUN_MPI=none sbatch --parsable --ntasks=3 --time=30 --output=fallback.log \
  "$SOURCE_DIR/jobs/sweep.sbatch" "$sweep" -o fallback.h5)
alone_job=$(sbatch --parsable --ntasks=3 --time=30 --output=alone.log \
  --wrap "'$QSWEEP_BIN' run '$sweep' -o alone.h5")
# The other family's launcher, where it is installed (Debian: both are).
if [ "$MPI_FAMILY" = mpich ]; then other_mpirun=$(type -P mpirun.openmpi || true); else other_mpirun=$(type -P mpiexec.mpich || true); fi
if [ -n "$other_mpirun" ]; then
  other_job=$(QSWEEP_LAUNCHER=mpirun QSWEEP_MPIRUN=$other_mpirun sbatch --parsable --ntasks=3 --time=30 \
    --output=other.log "$SOURCE_DIR/jobs/sweep.sbatch" "$sweep" -o other.h5)
fi
echo "submitted jobs $srun_job (srun), $mpirun_job (mpirun), $auto_job (auto)," \
  "$fallback_job (auto, srun without MPI ranks), $alone_job (no launcher)"
wait_for_idle_queue 300

for run in srun mpirun auto fallback; do
  echo "--- $run.log"
  cat "$run.log"
done
for job in "$srun_job" "$mpirun_job" "$auto_job" "$fallback_job"; do
  outcome="$(job_field "$job" JobState) $(job_field "$job" ExitCode)"
  [ "$outcome" = "COMPLETED 0:0" ] || fail "job $job: $outcome, expected COMPLETED 0:0"
done
# launched LOG WHAT: LOG shows the launch by WHAT (srun or mpirun) on 3 ranks.
launched() {
  case $2 in
    srun) grep -qF "launcher: srun --mpi=$SRUN_PLUGIN --wait=120 (3 ranks)" "$1" ;;
    mpirun) grep -F "launcher: $JOB_MPIRUN" "$1" | grep -qF "(3 ranks)" ;;
  esac
}
launched srun.log srun || fail "srun.log does not show the srun launch"
launched mpirun.log mpirun || fail "mpirun.log does not show the launch by $JOB_MPIRUN"
launched auto.log srun || fail "auto.log: srun works here but was not chosen"
launched fallback.log mpirun || fail "fallback.log: $JOB_MPIRUN was not chosen after srun failed"
for run in srun mpirun auto fallback; do
  check_complete "$run.h5" 3
  check_identical_results reference.h5 "$run.h5"
  if grep -q $'\r' "$run.log"; then fail "$run.log has carriage returns (progress redrawn in a log)"; fi
done

echo "--- alone.log"
cat alone.log
[ "$(job_field "$alone_job" ExitCode)" = 2:0 ] ||
  fail "job $alone_job without a launcher: exit code $(job_field "$alone_job" ExitCode), expected 2"
grep -q 'SLURM_NTASKS=3.*MPI sees 1 rank' alone.log || fail "alone.log does not explain the refusal"
[ ! -e alone.h5 ] || fail "the refused job wrote alone.h5"
if [ -n "$other_mpirun" ]; then
  echo "--- other.log"
  cat other.log
  [ "$(job_field "$other_job" ExitCode)" = 1:0 ] ||
    fail "job $other_job with the other MPI's launcher: exit code $(job_field "$other_job" ExitCode), expected 1"
  grep -q "qsweep is built with $MPI_FAMILY but .* is .*'s launcher" other.log || fail "other.log does not explain the refusal"
  [ ! -e other.h5 ] || fail "the refused job wrote other.h5"
else
  echo "not checked: no other MPI family's launcher installed (the job script refuses a launcher of the wrong family)"
fi
# The walltime warning through mpirun: SIGUSR1 to the batch shell alone (what --signal=B:USR1
# does) must reach the ranks, which drain and exit with 4, leaving a resumable file. Every task
# is held, so the warning certainly finds the run running; once rank 0 has taken the stop (it
# says so), the held tasks are let go: the running batches finish, the rest stays pending.
read -ra long_tasks <<<"$(sweep_task_ids "$SOURCE_DIR/tests/integration/slurm_long.yaml")"
hold_tasks hold "${long_tasks[@]}"
signal_job=$(QSWEEP_LAUNCHER=mpirun sbatch --parsable --ntasks=3 --time=30 --output=signal.log \
  "$SOURCE_DIR/jobs/sweep.sbatch" "$SOURCE_DIR/tests/integration/slurm_long.yaml" -o signal.h5)
no_hold
wait_started
scancel --batch --signal=USR1 "$signal_job"
wait_for_line signal.log "stop requested: no new tasks"
release_all
wait_for_idle_queue 120
stop_releasing
echo "--- signal.log"
cat signal.log
[ "$(job_field "$signal_job" ExitCode)" = 4:0 ] ||
  fail "signalled job $signal_job: exit code $(job_field "$signal_job" ExitCode), expected 4 (incomplete)"
status_rc=0
"$QSWEEP_BIN" status signal.h5 || status_rc=$?
[ $status_rc -eq 4 ] || fail "qsweep status signal.h5 exited with $status_rc, expected 4 (incomplete)"
"$PYTHON" - signal.h5 <<'PYEOF' || fail "signal.h5 is not a partly done, resumable file"
import sys
import h5py
import numpy as np

with h5py.File(sys.argv[1], "r") as f:
    status = f["tasks/status"][...]
pending, done = 0, 1  # enum values of /tasks/status
print(f"{np.count_nonzero(status == done)} done, {np.count_nonzero(status == pending)} pending")
sys.exit(0 if np.any(status == done) and np.any(status == pending) else 1)
PYEOF
echo "PASS: slurm_job"
