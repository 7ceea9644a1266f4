#!/usr/bin/env bash
# Debian's h5py (/usr/bin/python3) loads /exact into numpy arrays and finds the values that
# `qsweep eval` prints for the same parameters.
# Usage: run_h5py.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"
cat >h5py.yaml <<'YAML'
name: h5py-eval
blocks:
  - method: exact
    family: [ring, complete, path]
    N: [4, 5]
    lambda: [0.35, 0.8]
    qmax: [6, 10]
  - method: exact
    family: hetero_ring
    N: 6
    eps: 0.3
    lambda: 0.45
    qmax: 8
YAML
mpi 2 "$QSWEEP" run h5py.yaml -o h5py.h5 --quiet
"$PYTHON" "$SOURCE_DIR/tests/integration/run_h5py_eval.py" "$QSWEEP" h5py.h5
echo "PASS: h5py reads what qsweep eval prints"
