#!/usr/bin/env bash
# jobs/sweep-resubmit.sbatch against a walltime too short for the sweep: a job that gets the
# walltime warning (SIGUSR1) stops qsweep with "incomplete" (4) and resubmits itself with
# --resume, and the chain goes on until the sweep is complete. The first job certainly gets the
# warning, whatever the speed of the machine: its tasks are held (hold_lib.bash) until qsweep has
# taken the stop. Checks that it took at least two jobs, that every job but the last stopped
# incomplete and the last finished, and that the results are identical to an uninterrupted run.
# Usage: slurm_resubmit.sh QSWEEP_BINARY SOURCE_DIR (CTest passes both). Skips (exit 77) without SLURM.
# shellcheck source=tests/integration/slurm_lib.bash
source "$(dirname "$0")/slurm_lib.bash" "$@"
sweep=$SOURCE_DIR/tests/integration/slurm_long.yaml
export QSWEEP_MAX_JOBS=20

start=$SECONDS
mpirun -n 3 --oversubscribe "$QSWEEP_BIN" run "$sweep" -o reference.h5 --quiet
echo "uninterrupted run on 3 ranks: $((SECONDS - start)) s"
check_complete reference.h5 3

# The job script as a user would adapt it: SLURM's shortest walltime (1 minute), a warning 50 s
# before it, 3 ranks. slurmctld checks time limits every 30 s, so the warning arrives between 10
# and 40 s into each job, and qsweep has at least 10 s to drain (tasks of about half a second).
sed -e 's/^#SBATCH --time=.*/#SBATCH --time=1/' -e 's/^#SBATCH --signal=.*/#SBATCH --signal=B:USR1@50/' \
  -e 's/^#SBATCH --ntasks=.*/#SBATCH --ntasks=3/' -e 's/^#SBATCH --output=.*/#SBATCH --output=chain-%j.log/' \
  "$SOURCE_DIR/jobs/sweep-resubmit.sbatch" >short.sbatch
[ "$(grep -cxE '#SBATCH (--time=1|--signal=B:USR1@50|--ntasks=3|--output=chain-%j.log)' short.sbatch)" -eq 4 ] ||
  fail "could not adapt the #SBATCH lines of jobs/sweep-resubmit.sbatch"

# Every task is held in the first job, so it cannot finish before the warning. Once qsweep has
# taken the stop (it says so; or the job script stopped it before it started), the held tasks
# are let go: the running batches finish, the rest stays for the next job. The jobs the chain
# submits inherit the hold from the first job's environment; they are let go at once (the
# releasing goes on until the chain has ended).
read -ra sweep_tasks <<<"$(sweep_task_ids "$sweep")"
hold_tasks hold "${sweep_tasks[@]}"
start=$SECONDS
first_job=$(sbatch --parsable short.sbatch "$sweep" -o chain.h5)
no_hold
echo "submitted job $first_job"
wait_for_line "chain-$first_job.log" 'stop requested: no new tasks|stopped before qsweep started'
echo "job $first_job took the walltime warning after $((SECONDS - start)) s"
release_all
wait_for_idle_queue 600
stop_releasing
echo "chain finished in $((SECONDS - start)) s"

mapfile -t jobs < <(scontrol show job | sed -n 's/^JobId=\([0-9]*\) .*/\1/p' | sort -n)
for job in "${jobs[@]}"; do
  echo "--- job $job: $(job_field "$job" JobState), exit code $(job_field "$job" ExitCode)"
  cat "chain-$job.log"
done
[ "${#jobs[@]}" -ge 2 ] || fail "the sweep finished in ${#jobs[@]} job(s); the test needs a walltime hit"
last=${jobs[-1]}
for job in "${jobs[@]}"; do
  expected=4:0
  [ "$job" = "$last" ] && expected=0:0
  [ "$(job_field "$job" ExitCode)" = "$expected" ] ||
    fail "job $job exited with $(job_field "$job" ExitCode), expected $expected"
done
grep -q 'signal: asking qsweep to stop' "chain-$first_job.log" || fail "job $first_job got no walltime warning"
check_complete chain.h5 3
check_identical_results reference.h5 chain.h5
echo "PASS: slurm_resubmit (${#jobs[@]} jobs)"
