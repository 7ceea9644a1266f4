#!/usr/bin/env bash
# jobs/sweep-resubmit.sbatch against a walltime too short for the sweep: each job gets the
# walltime warning (SIGUSR1), qsweep stops with "incomplete" (4), the job resubmits itself with
# --resume, and the chain goes on until the sweep is complete. Checks that it took at least two
# jobs, that every job but the last stopped incomplete and the last finished, and that the results
# are identical to an uninterrupted run.
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
# and 40 s into each job, and qsweep has at least 10 s to drain; the sweep needs longer than 40 s.
sed -e 's/^#SBATCH --time=.*/#SBATCH --time=1/' -e 's/^#SBATCH --signal=.*/#SBATCH --signal=B:USR1@50/' \
  -e 's/^#SBATCH --ntasks=.*/#SBATCH --ntasks=3/' -e 's/^#SBATCH --output=.*/#SBATCH --output=chain-%j.log/' \
  "$SOURCE_DIR/jobs/sweep-resubmit.sbatch" >short.sbatch
[ "$(grep -cxE '#SBATCH (--time=1|--signal=B:USR1@50|--ntasks=3|--output=chain-%j.log)' short.sbatch)" -eq 4 ] ||
  fail "could not adapt the #SBATCH lines of jobs/sweep-resubmit.sbatch"

start=$SECONDS
first_job=$(sbatch --parsable short.sbatch "$sweep" -o chain.h5)
echo "submitted job $first_job"
wait_for_idle_queue 600
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
