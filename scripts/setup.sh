#!/usr/bin/env bash
# One command from a fresh Debian 12 clone to a results file: installs the Debian packages,
# builds qsweep, makes `import qsweep` work for /usr/bin/python3 (scripts/install-python.sh), and
# runs the small default sweep on 3 MPI ranks into results/default.h5.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
bash scripts/install-python.sh build
mkdir -p results
# Open MPI refuses to run as root unless told it is intended (containers, CI machines).
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
build/qsweep plan sweeps/default.yaml
mpirun -n 3 --oversubscribe build/qsweep run sweeps/default.yaml -o results/default.h5 --force
build/qsweep status results/default.h5
echo "setup: results in results/default.h5 (try: build/qsweep export results/default.h5 --group exact)"
