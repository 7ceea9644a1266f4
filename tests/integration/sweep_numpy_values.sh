#!/usr/bin/env bash
# linspace and logspace values in a sweep equal numpy's (numpy.linspace; numpy.logspace with its
# AVX-512 power turned off, whose results differ from the correctly rounded pow by an ulp on a
# quarter of the values), bitwise, on 50 cases: what `qsweep plan --tasks --json` says the tasks
# hold. Needs Debian's numpy (/usr/bin/python3).
# Usage: sweep_numpy_values.sh QSWEEP_BINARY SOURCE_DIR
set -euo pipefail
qsweep=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
NPY_DISABLE_CPU_FEATURES="AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL" \
  /usr/bin/python3 "$(dirname "$0")/sweep_numpy_values.py" "$qsweep" "$work"
