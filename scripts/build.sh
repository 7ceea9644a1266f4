#!/usr/bin/env bash
# Configures and builds qsweep with one of CMakePresets.json's presets (warnings are errors).
# Usage: scripts/build.sh [--preset release|mpich|sanitize|benchmark] [--mpi openmpi|mpich]
#                         [extra cmake args]
#   release (default): Release against Debian's Open MPI, in build/
#   mpich (same as --mpi mpich): against Debian's MPICH (mpicc.mpich, h5pcc.mpich), in build-mpich/
#   sanitize: ASan + UBSan, in build-sanitize/; benchmark: the benchmarks only, in build-bench/
set -euo pipefail
cd "$(dirname "$0")/.."
preset=release
case "${1:-}" in
  --preset) preset=${2:?--preset needs a name from CMakePresets.json}; shift 2 ;;
  --mpi)
    case "${2:-}" in
      openmpi) preset=release ;;
      mpich) preset=mpich ;;
      *) echo "build.sh: --mpi must be openmpi or mpich, not '${2:-}'" >&2; exit 2 ;;
    esac
    shift 2 ;;
esac
# Ninja when it is there (scripts/install-deps.sh installs it), else CMake's default generator.
if [ -z "${CMAKE_GENERATOR:-}" ] && command -v ninja >/dev/null; then export CMAKE_GENERATOR=Ninja; fi
# ccache when it is there (installed as well): rebuilds, other clones and the other presets' build
# directories reuse identical compilations. Paths under the checkout are hashed relative to it.
if command -v ccache >/dev/null && [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ]; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
fi
cmake --preset "$preset" "$@"
cmake --build --preset "$preset" -j "$(nproc)"
