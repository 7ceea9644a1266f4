#!/usr/bin/env bash
# Configures and builds qsweep (Release, warnings as errors).
# Usage: scripts/build.sh [--mpi openmpi|mpich] [extra cmake args]
#   --mpi openmpi (default): Debian's Open MPI, in build/
#   --mpi mpich: Debian's MPICH (mpicc.mpich, h5pcc.mpich, mpiexec.mpich), in build-mpich/
set -euo pipefail
cd "$(dirname "$0")/.."
mpi=openmpi
if [ "${1:-}" = "--mpi" ]; then
  mpi=${2:?--mpi needs openmpi or mpich}
  shift 2
fi
case "$mpi" in
  openmpi) dir=build; hints=() ;;
  # FindMPI looks for mpicc.mpich, mpiexec.mpich; FindHDF5 asks h5pcc.mpich for MPICH's HDF5.
  mpich) dir=build-mpich; hints=(-DMPI_EXECUTABLE_SUFFIX=.mpich -DHDF5_C_COMPILER_EXECUTABLE=h5pcc.mpich) ;;
  *) echo "build.sh: --mpi must be openmpi or mpich, not '$mpi'" >&2; exit 2 ;;
esac
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DQSWEEP_WERROR=ON "${hints[@]}" "$@"
cmake --build "$dir" -j "$(nproc)"
