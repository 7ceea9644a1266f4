#!/usr/bin/env bash
# Running part of a plan (docs/running.md, "Running part of a plan"):
# - --shard I/K: three shards, each into its own file at another rank count, hold disjoint sets
#   of finished tasks covering the plan; merged in two orders they equal a run of the whole plan
#   on every dataset (timings aside), bitwise;
# - --select: one block, then the tasks of one value, run into the same file, then --resume runs
#   the rest; the file equals a run of the whole plan;
# - bad --shard and --select values, and a selection without tasks, are refused (exit 2, no file).
# Usage: run_parts.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"

cat >study.yaml <<'YAML'
name: parts
seed: 3
blocks:
  - method: exact
    family: [complete, ring]
    N: 4
    lambda: [0.3, 0.6, 0.8]
    qmax: 8
  - method: simulate
    policy: jsq
    family: complete
    d: 2
    N: 4
    lambda: [0.3, 0.5, 0.8]
    horizon: 300
    warmup: 30
    replications: 2
    qmax: 8
  - method: meanfield
    policy: power_of_d
    policy_d: [1, 2]
    lambda: 0.7
YAML
mpi 2 "$QSWEEP" run study.yaml -o whole.h5 --quiet

ranks=(1 2 3)
for i in 1 2 3; do
  mpi "${ranks[$((i - 1))]}" "$QSWEEP" run study.yaml -o "part$i.h5" --shard "$i/3" --quiet 2>"part$i.txt" ||
    fail "shard $i: $(cat "part$i.txt")"
  grep -q "qsweep: shard $i/3: [0-9]* of the 11 tasks of study.yaml" "part$i.txt" || fail "$(cat "part$i.txt")"
  grep -q "the part is finished; the plan's other [0-9]* tasks are not in it" "part$i.txt" ||
    fail "$(cat "part$i.txt")"
done
"$PYTHON" - part1.h5 part2.h5 part3.h5 <<'PY' || fail "the shards do not partition the plan"
import sys, h5py, numpy as np
done = [h5py.File(p)["tasks/status"][()] == 1 for p in sys.argv[1:]]
assert (sum(d.astype(int) for d in done) == 1).all(), done  # each task in exactly one shard
assert all(d.sum() >= 1 for d in done), [d.sum() for d in done]  # balanced by cost, not count
PY
"$QSWEEP" merge part1.h5 part2.h5 part3.h5 -o merged.h5 >/dev/null
$CHECK same merged.h5 whole.h5
"$QSWEEP" merge part3.h5 part1.h5 part2.h5 -o merged2.h5 >/dev/null
$CHECK same merged2.h5 whole.h5

# --select into one file, block by block and value by value, then the rest.
mpi 2 "$QSWEEP" run study.yaml -o sel.h5 --select block=1 --quiet 2>sel1.txt || fail "$(cat sel1.txt)"
grep -q "select block=1: 3 of the 11 tasks" sel1.txt || fail "$(cat sel1.txt)"
mpi 3 "$QSWEEP" run study.yaml -o sel.h5 --resume --select lambda=0.3,method=exact \
  --select policy=power_of_d,policy_d=2 --quiet 2>sel2.txt || fail "$(cat sel2.txt)"
grep -q "select lambda=0.3,method=exact or policy=power_of_d,policy_d=2: 3 of the 11 tasks" sel2.txt || fail "$(cat sel2.txt)"
"$PYTHON" - sel.h5 <<'PY' || fail "the selections ran other tasks"
import sys, h5py
with h5py.File(sys.argv[1]) as f:
    done = sorted(int(i) for i in f["tasks/id"][()][f["tasks/status"][()] == 1])
    assert done == [0, 3, 6, 7, 8, 10], done
PY
mpi 2 "$QSWEEP" run study.yaml -o sel.h5 --resume --quiet
$CHECK same sel.h5 whole.h5

# Refusals: nothing written.
expect_exit 2 mpi 2 "$QSWEEP" run study.yaml -o bad.h5 --shard 4/3 --quiet 2>bad1.txt
grep -q -- "--shard '4/3': I is not in 1..K; expected I/K" bad1.txt || fail "$(cat bad1.txt)"
expect_exit 2 mpi 2 "$QSWEEP" run study.yaml -o bad.h5 --select lamda=0.3 --quiet 2>bad2.txt
grep -q -- "--select 'lamda=0.3': no parameter column 'lamda' (did you mean 'lambda'?)" bad2.txt ||
  fail "$(cat bad2.txt)"
expect_exit 2 mpi 2 "$QSWEEP" run study.yaml -o bad.h5 --select lambda=0.31 --quiet 2>bad3.txt
grep -q "select lambda=0.31: no task of study.yaml is in it" bad3.txt || fail "$(cat bad3.txt)"
[ ! -e bad.h5 ] || fail "a refused part wrote a file"
echo "PASS: shards merge into the whole plan; selections run into one file"
