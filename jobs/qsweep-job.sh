# shellcheck shell=bash
# Shared by the SLURM batch scripts in jobs/ (sourced inside the job, not run on its own):
# picks the MPI launcher, runs `qsweep run` with the walltime warning forwarded to every rank, and
# (for the self-resubmitting script) submits the next job of the chain when the sweep is
# incomplete. qsweep itself refuses a launch that gives it one MPI rank where SLURM allocated
# several (exit code 2). See docs/cluster.md.
#
# Settings (environment, all optional):
#   QSWEEP           the qsweep executable (default: qsweep on PATH, else $QSWEEP_DIR/build/qsweep)
#   QSWEEP_LAUNCHER  auto (default) | srun | mpirun
#   QSWEEP_SRUN_MPI  the srun --mpi plugin (default pmix)
#   QSWEEP_MAX_JOBS  most jobs in a self-resubmitting chain, the first included (default 10)

# Exit codes of qsweep (include/qsweep/common/exit_codes.hpp).
readonly QSWEEP_EXIT_ERROR=1 QSWEEP_EXIT_INCOMPLETE=4

qsweep_log() { echo "qsweep-job[${SLURM_JOB_ID:-?}] $(date +%H:%M:%S): $*" >&2; }

qsweep_find_binary() {
  if [ -n "${QSWEEP:-}" ]; then
    echo "$QSWEEP"
  elif command -v qsweep >/dev/null; then
    command -v qsweep
  else
    echo "$QSWEEP_DIR/build/qsweep"
  fi
}

# The launch command for candidate $1 (srun | mpirun), one word per line.
qsweep_launch_command() {
  case $1 in
    srun) printf '%s\n' srun "--mpi=${QSWEEP_SRUN_MPI:-pmix}" ;;
    # Open MPI's mpirun reads the allocation (nodes, tasks per node) from SLURM itself.
    mpirun) printf '%s\n' mpirun ;;
  esac
}

# Whether srun gives the processes it starts their MPI ranks: a probe started like qsweep must see
# SLURM_NTASKS distinct ranks 0..SLURM_NTASKS-1 from the process manager (PMIx or PMI-2). Fails
# where srun lacks the plugin or the MPI library lacks the client (then mpirun is the choice).
qsweep_srun_gives_ranks() {
  local -a launch
  mapfile -t launch < <(qsweep_launch_command srun)
  command -v srun >/dev/null || { qsweep_log "srun not found"; return 1; }
  local expected ranks
  expected=$(seq 0 $((SLURM_NTASKS - 1)) | tr '\n' ' ')
  # shellcheck disable=SC2016  # expanded by each launched process, not here
  ranks=$(timeout 120 "${launch[@]}" sh -c 'echo "${PMIX_RANK:-${PMI_RANK:-none}}"' \
    2>/dev/null | sort -n | tr '\n' ' ')
  [ "$ranks" = "$expected" ] && return 0
  qsweep_log "probe ${launch[*]}: expected MPI ranks [${expected% }], got [${ranks% }]; not using srun"
  return 1
}

# Sets QSWEEP_LAUNCH (array): the launcher QSWEEP_LAUNCHER names, or for `auto` srun if it gives
# MPI ranks, else mpirun.
qsweep_choose_launcher() {
  local launcher=${QSWEEP_LAUNCHER:-auto}
  case $launcher in
    srun | mpirun) ;;
    # srun is SLURM's own launcher; mpirun (Open MPI) is the fallback where srun lacks PMIx.
    auto) if qsweep_srun_gives_ranks; then launcher=srun; else launcher=mpirun; fi ;;
    *) qsweep_log "QSWEEP_LAUNCHER must be auto, srun or mpirun, not '$launcher'"; return 1 ;;
  esac
  mapfile -t QSWEEP_LAUNCH < <(qsweep_launch_command "$launcher")
  qsweep_log "launcher: ${QSWEEP_LAUNCH[*]} ($SLURM_NTASKS ranks)"
}

# Called on SIGUSR1 (the walltime warning, #SBATCH --signal=B:USR1@...), SIGTERM and SIGINT
# reaching this batch shell: passes SIGUSR1 through the launcher, which forwards it to every rank,
# so qsweep finishes cleanly with "incomplete" (4). (SIGTERM would make srun/mpirun kill the ranks.)
qsweep_request_stop() {
  QSWEEP_STOP_REQUESTED=1
  qsweep_log "signal: asking qsweep to stop"
  [ -n "${QSWEEP_LAUNCHER_PID:-}" ] && kill -USR1 "$QSWEEP_LAUNCHER_PID" 2>/dev/null
}

# Runs `qsweep run "$@"` on all ranks of the allocation and returns its exit code.
qsweep_job_run() {
  : "${SLURM_JOB_ID:?qsweep-job.sh runs inside a SLURM job (sbatch)}"
  QSWEEP_STOP_REQUESTED=0 QSWEEP_LAUNCHER_PID=
  # Trapped from the start: a warning that arrives early must not end this shell.
  trap qsweep_request_stop USR1 TERM INT
  if [ -z "${SLURM_NTASKS:-}" ]; then
    qsweep_log "the job gives no task count: ask for the MPI ranks with --ntasks (or --ntasks-per-node)"
    return $QSWEEP_EXIT_ERROR
  fi
  # Since Slurm 22.05 srun no longer inherits --cpus-per-task from the batch allocation.
  [ -n "${SLURM_CPUS_PER_TASK:-}" ] && export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK
  local qsweep
  qsweep=$(qsweep_find_binary)
  [ -x "$qsweep" ] || { qsweep_log "qsweep executable not found ($qsweep); set QSWEEP"; return $QSWEEP_EXIT_ERROR; }
  qsweep_choose_launcher || return $QSWEEP_EXIT_ERROR
  if [ "$QSWEEP_STOP_REQUESTED" -eq 1 ]; then
    qsweep_log "stopped before qsweep started"
    return $QSWEEP_EXIT_INCOMPLETE
  fi

  "${QSWEEP_LAUNCH[@]}" "$qsweep" run "$@" &
  QSWEEP_LAUNCHER_PID=$!
  [ "$QSWEEP_STOP_REQUESTED" -eq 1 ] && kill -USR1 "$QSWEEP_LAUNCHER_PID"  # arrived during the fork
  local rc
  # `wait` returns early (status > 128) whenever a trapped signal arrives; wait again until the
  # launcher has really exited.
  while true; do
    wait "$QSWEEP_LAUNCHER_PID"
    rc=$?
    kill -0 "$QSWEEP_LAUNCHER_PID" 2>/dev/null || break
  done
  # A signal from now on is only logged: resubmitting must not be cut short.
  QSWEEP_LAUNCHER_PID=
  qsweep_log "qsweep run exited with $rc"
  return "$rc"
}

# Arguments for the next job of a chain: the same `qsweep run` arguments with --resume and
# without --force (which would discard the work done so far), one per line.
qsweep_resume_arguments() {
  local arg
  for arg in "$@"; do
    case $arg in --force | --resume) ;; *) printf '%s\n' "$arg" ;; esac
  done
  printf '%s\n' --resume
}

# Runs the sweep; if it stopped incomplete (walltime), submits this same script again with
# --resume, to start once this job has ended. The chain ends when the sweep is complete, on any
# other exit code, or after QSWEEP_MAX_JOBS jobs. The next job keeps this job's allocation
# (nodes, tasks, CPUs per task, time limit, partition, job name); everything else comes from the
# script's #SBATCH lines.
qsweep_job_run_resubmitting() {
  local job_number=${QSWEEP_JOB_NUMBER:-1} max_jobs=${QSWEEP_MAX_JOBS:-10} rc
  qsweep_log "job $job_number of a chain of at most $max_jobs"
  qsweep_job_run "$@"
  rc=$?
  [ "$rc" -eq $QSWEEP_EXIT_INCOMPLETE ] || return "$rc"
  if [ "$job_number" -ge "$max_jobs" ]; then
    qsweep_log "sweep incomplete after $job_number jobs (QSWEEP_MAX_JOBS); resume it by hand"
    return "$rc"
  fi

  local -a next=(--dependency="afterany:$SLURM_JOB_ID" --chdir="$PWD" --job-name="$SLURM_JOB_NAME"
    --nodes="$SLURM_JOB_NUM_NODES" --ntasks="$SLURM_NTASKS")
  [ -n "${SLURM_CPUS_PER_TASK:-}" ] && next+=(--cpus-per-task="$SLURM_CPUS_PER_TASK")
  [ -n "${SLURM_JOB_PARTITION:-}" ] && next+=(--partition="$SLURM_JOB_PARTITION")
  local time_limit
  time_limit=$(squeue -h -j "$SLURM_JOB_ID" -o %l)
  [ -n "$time_limit" ] && [ "$time_limit" != UNLIMITED ] && next+=(--time="$time_limit")
  # The next job starts from the environment this chain was submitted with: this job's SLURM_*
  # variables would otherwise leak into it (and srun reads some of them as options).
  local -a clean_env=(env)
  local name
  for name in $(compgen -e); do
    case $name in SLURM_CONF) ;; SLURM_* | SRUN_*) clean_env+=(-u "$name") ;; esac
  done
  clean_env+=(QSWEEP_JOB_NUMBER=$((job_number + 1)))
  local -a resume_args
  mapfile -t resume_args < <(qsweep_resume_arguments "$@")
  # $0 is SLURM's copy of the submitted script, so the next job runs exactly this script.
  local next_id
  if ! next_id=$("${clean_env[@]}" sbatch --parsable "${next[@]}" "$0" "${resume_args[@]}"); then
    qsweep_log "could not submit the next job; resume by hand with --resume"
    return "$rc"
  fi
  qsweep_log "sweep incomplete: submitted job ${next_id%%;*} (job $((job_number + 1)) of the chain) to resume it"
  return "$rc"
}
