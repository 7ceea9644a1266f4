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
#   QSWEEP_SRUN_MPI  the srun --mpi plugin (default: pmix for Open MPI, pmi2 for the MPICH family)
#   QSWEEP_SRUN_WAIT seconds srun lets the other ranks run on once one has ended (default 120): a
#                    rank that dies ends the job step then, instead of the others hanging
#   QSWEEP_MPIRUN    the mpirun command (default mpirun; e.g. mpiexec.mpich, or a full path)
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

# The MPI family of executable $1, from the MPI library it loads: openmpi, mpich (MPICH and the
# libraries built on it: Intel MPI, MVAPICH, Cray MPICH) or unknown.
qsweep_binary_mpi_family() {
  local libraries
  libraries=$(ldd "$1" 2>/dev/null) || { echo unknown; return; }
  if grep -qE 'libopen-(pal|rte)\.so|libmpi\.so\.40' <<<"$libraries"; then
    echo openmpi
  elif grep -qE 'libmpich|libmpi(_[a-z]+)?\.so' <<<"$libraries"; then
    echo mpich
  else
    echo unknown
  fi
}

# What kind of launcher command $1 is: openmpi (Open MPI's mpirun), hydra (MPICH's mpiexec, which
# says "HYDRA" in its --version) or unknown.
qsweep_mpirun_kind() {
  local version
  version=$("$1" --version 2>&1) || true
  if grep -qE 'Open MPI|OpenRTE' <<<"$version"; then
    echo openmpi
  elif grep -q HYDRA <<<"$version"; then
    echo hydra
  else
    echo unknown
  fi
}

# The srun --mpi plugin: QSWEEP_SRUN_MPI, else the one the MPI family's library speaks (Open MPI:
# PMIx; MPICH: PMI-1/PMI-2, which SLURM's pmi2 plugin serves).
qsweep_srun_plugin() {
  if [ -n "${QSWEEP_SRUN_MPI:-}" ]; then
    echo "$QSWEEP_SRUN_MPI"
  elif [ "$QSWEEP_MPI_FAMILY" = mpich ]; then
    echo pmi2
  else
    echo pmix
  fi
}

# The launch command for candidate $1 (srun | mpirun), one word per line.
qsweep_launch_command() {
  case $1 in
    # --wait: srun's default lets the other ranks run on forever once one has died (they block
    # in MPI waiting for it); a normal end has every rank leave MPI_Finalize at about once.
    srun) printf '%s\n' srun "--mpi=$(qsweep_srun_plugin)" "--wait=${QSWEEP_SRUN_WAIT:-120}" ;;
    # mpirun reads the allocation (nodes, tasks per node) from SLURM itself. Hydra is told to
    # start its proxies with srun (its default inside an allocation), so that the ranks are in a
    # job step, where a stop signal reaches them (qsweep_request_stop).
    mpirun)
      printf '%s\n' "${QSWEEP_MPIRUN:-mpirun}"
      [ "$(qsweep_mpirun_kind "${QSWEEP_MPIRUN:-mpirun}")" = hydra ] && printf '%s\n' -bootstrap slurm
      ;;
  esac
  return 0
}

# Whether srun gives the processes it starts their MPI ranks: a probe started like qsweep must see
# SLURM_NTASKS distinct ranks 0..SLURM_NTASKS-1 in the variable the MPI library reads (Open MPI:
# PMIX_RANK; MPICH: PMI_RANK; either when the family is not known). Fails where srun lacks the
# plugin or the plugin speaks another protocol than the library (then mpirun is the choice).
qsweep_srun_gives_ranks() {
  local -a launch
  mapfile -t launch < <(qsweep_launch_command srun)
  command -v srun >/dev/null || { qsweep_log "srun not found"; return 1; }
  local rank_variable
  # shellcheck disable=SC2016  # expanded by each launched process, not here
  case $QSWEEP_MPI_FAMILY in
    openmpi) rank_variable='${PMIX_RANK:-none}' ;;
    mpich) rank_variable='${PMI_RANK:-none}' ;;
    *) rank_variable='${PMIX_RANK:-${PMI_RANK:-none}}' ;;
  esac
  local expected ranks
  expected=$(seq 0 $((SLURM_NTASKS - 1)) | tr '\n' ' ')
  ranks=$(timeout 120 "${launch[@]}" sh -c "echo \"$rank_variable\"" \
    2>/dev/null | sort -n | tr '\n' ' ')
  [ "$ranks" = "$expected" ] && return 0
  qsweep_log "probe ${launch[*]}: expected MPI ranks [${expected% }], got [${ranks% }]; not using srun"
  return 1
}

# Sets QSWEEP_LAUNCH (array) and QSWEEP_LAUNCHER_KIND (srun | openmpi | hydra | unknown): the
# launcher QSWEEP_LAUNCHER names, or for `auto` srun if it gives MPI ranks, else mpirun. Refuses an
# mpirun of the other MPI family than qsweep's (it would start one-rank MPI worlds).
qsweep_choose_launcher() {
  local launcher=${QSWEEP_LAUNCHER:-auto}
  case $launcher in
    srun | mpirun) ;;
    # srun is SLURM's own launcher; mpirun is the fallback where srun lacks the plugin.
    auto) if qsweep_srun_gives_ranks; then launcher=srun; else launcher=mpirun; fi ;;
    *) qsweep_log "QSWEEP_LAUNCHER must be auto, srun or mpirun, not '$launcher'"; return 1 ;;
  esac
  mapfile -t QSWEEP_LAUNCH < <(qsweep_launch_command "$launcher")
  QSWEEP_LAUNCHER_KIND=srun
  if [ "$launcher" = mpirun ]; then
    local mpirun=${QSWEEP_LAUNCH[0]}
    command -v "$mpirun" >/dev/null || { qsweep_log "$mpirun not found; set QSWEEP_MPIRUN"; return 1; }
    QSWEEP_LAUNCHER_KIND=$(qsweep_mpirun_kind "$mpirun")
    local family=$QSWEEP_LAUNCHER_KIND
    [ "$family" = hydra ] && family=mpich
    if [ "$family" != unknown ] && [ "$QSWEEP_MPI_FAMILY" != unknown ] && [ "$family" != "$QSWEEP_MPI_FAMILY" ]; then
      local where
      where=$(command -v "$mpirun")
      [ "$where" = "$mpirun" ] || where="$mpirun ($where)"
      qsweep_log "qsweep is built with $QSWEEP_MPI_FAMILY but $where is $family's launcher:" \
        "load the MPI qsweep was built with, or set QSWEEP_MPIRUN to its mpirun"
      return 1
    fi
  fi
  qsweep_log "launcher: ${QSWEEP_LAUNCH[*]} ($SLURM_NTASKS ranks)"
}

# Called on SIGUSR1 (the walltime warning, #SBATCH --signal=B:USR1@...), SIGTERM and SIGINT
# reaching this batch shell: sends SIGUSR1 to every rank, so qsweep drains and finishes cleanly
# with "incomplete" (4). srun and Open MPI's mpirun forward it to every rank. MPICH's Hydra
# mpiexec forwards it too, but then reports exit code 0 for ranks it signalled itself (whatever
# they returned), which would end a resubmitting chain; so under Hydra the signal goes to the ranks
# through SLURM instead: every step of the job (Hydra's proxies ignore it, the ranks under them
# take it), not the batch step. (SIGTERM would make srun/mpirun kill the ranks.)
qsweep_request_stop() {
  QSWEEP_STOPS_REQUESTED=$((QSWEEP_STOPS_REQUESTED + 1))
  qsweep_log "signal: asking qsweep to stop"
  # Before the launch, or before Hydra's job step exists, qsweep_job_run delivers it later.
  if [ -n "${QSWEEP_LAUNCHER_PID:-}" ] && qsweep_signal_ranks; then
    QSWEEP_STOPS_DELIVERED=$((QSWEEP_STOPS_DELIVERED + 1))
  fi
  return 0
}

# Sends SIGUSR1 to every rank of the running launch (see qsweep_request_stop); fails when Hydra's
# job step does not exist yet.
qsweep_signal_ranks() {
  if [ "$QSWEEP_LAUNCHER_KIND" != hydra ]; then
    kill -USR1 "$QSWEEP_LAUNCHER_PID" 2>/dev/null
    return 0
  fi
  local steps step
  steps=$(squeue -h -s -j "$SLURM_JOB_ID" -o %i 2>/dev/null | grep -E '^[0-9]+\.[0-9]+$') || return 1
  for step in $steps; do
    scancel --signal=USR1 "$step" || qsweep_log "could not signal step $step"
  done
}

# Runs `qsweep run "$@"` on all ranks of the allocation and returns its exit code.
qsweep_job_run() {
  : "${SLURM_JOB_ID:?qsweep-job.sh runs inside a SLURM job (sbatch)}"
  QSWEEP_STOPS_REQUESTED=0 QSWEEP_STOPS_DELIVERED=0 QSWEEP_LAUNCHER_PID=
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
  QSWEEP_MPI_FAMILY=$(qsweep_binary_mpi_family "$qsweep")
  qsweep_log "qsweep: $qsweep (MPI: $QSWEEP_MPI_FAMILY)"
  qsweep_choose_launcher || return $QSWEEP_EXIT_ERROR
  # Under srun --mpi=pmix the ranks read their job data from the PMIx server's hash store, not
  # from its shared-memory store (gds ds21/ds12). Here both ranks of a node died at start with a
  # call through a null pointer (SIGSEGV, "Failing at address: (nil)") in 2 of about 110 two-node
  # srun starts with Debian 12's PMIx 4.2.2 on a loaded machine; the shared-memory store is the
  # part of PMIx with reports of such crashes (openpmix#1114, ompi#7335, ompi#12495), though no
  # core was caught to prove it the cause. A PMIX_MCA_gds of the user's own is kept.
  if [ "$QSWEEP_LAUNCHER_KIND" = srun ] && [ "$(qsweep_srun_plugin)" = pmix ]; then
    export PMIX_MCA_gds=${PMIX_MCA_gds:-hash}
  fi
  if [ "$QSWEEP_STOPS_REQUESTED" -gt 0 ]; then
    qsweep_log "stopped before qsweep started"
    return $QSWEEP_EXIT_INCOMPLETE
  fi

  "${QSWEEP_LAUNCH[@]}" "$qsweep" run "$@" &
  QSWEEP_LAUNCHER_PID=$!
  local rc
  # `wait` returns early (status > 128) whenever a trapped signal arrives; wait again until the
  # launcher has really exited. A stop that reached no rank yet (it arrived during the fork, or
  # Hydra's job step had not started) is tried again every half second.
  while true; do
    if [ "$QSWEEP_STOPS_DELIVERED" -lt "$QSWEEP_STOPS_REQUESTED" ]; then
      if qsweep_signal_ranks; then QSWEEP_STOPS_DELIVERED=$((QSWEEP_STOPS_DELIVERED + 1)); else sleep 0.5; fi
      kill -0 "$QSWEEP_LAUNCHER_PID" 2>/dev/null && continue
    fi
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
