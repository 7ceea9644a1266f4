# The MPI launcher of the tests (sourced by run_lib.bash and slurm_lib.bash; not a test itself).
# `mpirun` in the test scripts is the launcher of the MPI qsweep is built with: QSWEEP_MPIEXEC
# (tests/CMakeLists.txt sets it), else the mpirun on PATH. The scripts give Open MPI's flags; for
# MPICH's Hydra, which oversubscribes and passes the whole environment to every rank by default
# and knows neither flag, --oversubscribe, -x VAR and --mca NAME VALUE are left out.
export QSWEEP_MPIEXEC=${QSWEEP_MPIEXEC:-$(type -P mpirun)}
MPIEXEC=$QSWEEP_MPIEXEC
if grep -qE "Open MPI|OpenRTE" <<<"$("$MPIEXEC" --version 2>&1)"; then MPI_FAMILY=openmpi; else MPI_FAMILY=mpich; fi
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
