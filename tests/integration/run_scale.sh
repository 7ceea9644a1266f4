#!/usr/bin/env bash
# 100000 tiny tasks on 3 ranks: the sweep completes, every task is done exactly once, and the
# resident memory of every rank does not grow with the number of finished tasks (sampled when each
# 5000th task starts; from the smallest sample among tasks 10000-35000 to the smallest among
# 70000-95000 at most 20 bytes per finished task, i.e. nothing kept per task beyond the plan).
# `qsweep export` of its groups equals the datasets (read by h5py) and, reading the rows in
# pieces, needs about as much memory as the export of a one-task file.
# Usage: run_scale.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"
sweep=$SOURCE_DIR/tests/integration/run_scale.yaml

"$PYTHON" "$SOURCE_DIR/tests/integration/run_scale.py" 3 20 -- \
  "$QSWEEP" run "$sweep" -o scale.h5 --quiet
"$QSWEEP" status scale.h5 | grep -E '^all ' | grep -qE '^all +100000 +100000 +0 +0 +0$' ||
  fail "not all 100000 tasks are done"
"$PYTHON" - scale.h5 <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    assert (f["tasks/attempts"][()] == 1).all(), "a task ran more than once"
    assert set(f["tasks/rank"][()].tolist()) == {0, 1, 2}
    lam = f["exact/lambda"][()]
    assert np.all(np.diff(lam) > 0) and lam.size == 100000
    # complete N = 2, d = 2: one M/M/1 queue of rate 2 with arrival rate 2 lambda: E[Q] = rho/(1-rho).
    eq = f["exact/EQ"][()]
    assert np.allclose(eq, lam / (1 - lam), rtol=1e-9), "EQ is not rho / (1 - rho)"
PY
echo "file size: $(stat -c %s scale.h5) bytes for 100000 tasks"

# Export: the CSV equals the datasets; peak memory (GNU time, KiB) barely above a one-task file's
# (reading whole columns took 30-40 MB more at 100000 rows).
cat >one.yaml <<'YAML'
name: one
blocks:
  - {method: exact, family: complete, N: 2, lambda: 0.5, per_type: false, light_traffic: false}
YAML
"$QSWEEP" run one.yaml -o one.h5 --quiet
peak_kib() { /usr/bin/time -f %M -o peak.txt "$QSWEEP" export "$1" --group "$2" --csv "$3" && cat peak.txt; }
for group in exact tasks; do
  small=$(peak_kib one.h5 "$group" one.csv)
  big=$(peak_kib scale.h5 "$group" "$group.csv")
  echo "export /$group: peak $big KiB for 100000 rows, $small KiB for one row"
  [ $((big - small)) -lt 8192 ] || fail "export /$group needs $((big - small)) KiB more for 100000 rows"
  $CHECK csv scale.h5 "$group" "$group.csv"
done
echo "PASS: 100000 tasks on 3 ranks with flat memory; export streams and equals the datasets"
