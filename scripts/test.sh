#!/usr/bin/env bash
# Builds qsweep and runs every test: the Release build against Open MPI (warnings are errors) with
# all unit and MPI/HDF5 integration tests; the same source against MPICH (build-mpich/) with every
# test that links MPI or parallel HDF5 again (layers store and run, the integration scripts) under
# MPICH's launcher; then the unit tests again under AddressSanitizer + UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
jobs=$(nproc)

bash scripts/build.sh
(cd build && ctest --output-on-failure --timeout 1200)

bash scripts/build.sh --mpi mpich
# The layers below store (common ... sweep) link neither MPI nor HDF5: their tests are the same
# program under either family and run once, above.
(cd build-mpich && ctest --output-on-failure --timeout 1200 -L '^(store|run|integration)$')

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B build-sanitize "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQSWEEP_WERROR=ON \
  -DQSWEEP_SANITIZE=ON -DQSWEEP_BUILD_BENCHMARKS=OFF
cmake --build build-sanitize -j "$jobs"
# Open MPI's own allocations are reported as leaks at exit; leak checking stays off for that reason.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
(cd build-sanitize && ctest --output-on-failure --timeout 1200 -LE integration)
echo "test: all tests passed"
