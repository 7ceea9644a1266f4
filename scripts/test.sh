#!/usr/bin/env bash
# Builds qsweep and runs every test: the Release build against Open MPI (warnings are errors) with
# all unit and MPI/HDF5 integration tests; the same source against MPICH (build-mpich/) with every
# test that links MPI or parallel HDF5 again (layers store and run, the integration scripts, the
# installed package) under MPICH's launcher; then the unit tests again under AddressSanitizer + UBSan. Before and between:
# clang-format and clang-tidy (scripts/check-format.sh, scripts/check-tidy.sh).
# Tests run side by side, one per core (tests/CMakeLists.txt says why that is safe); a failing
# test's output is printed, so that a CI log shows why.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

bash scripts/check-format.sh
bash scripts/build.sh
ctest --preset release --timeout 1200 -j "$(nproc)" --output-on-failure
bash scripts/check-tidy.sh build

bash scripts/build.sh --mpi mpich
# The layers below store (common ... sweep) link neither MPI nor HDF5: their tests are the same
# program under either family and run once, above.
ctest --preset mpich --timeout 1200 -j "$(nproc)" --output-on-failure -L '^(store|run|integration|build)$'

# Open MPI's own allocations are reported as leaks at exit: the preset turns leak checking off.
bash scripts/build.sh --preset sanitize
ctest --preset sanitize --timeout 1200 -j "$(nproc)" --output-on-failure
echo "test: all tests passed"
