#!/usr/bin/env bash
# Tasks named by their content (docs/sweep-format.md, "Task keys"; docs/running.md, "Growing a
# study" and "Merging files"):
# - a value inserted between the two values of a simulate block (and one into an exact block
#   before it) and --resume: exactly the two new tasks run, every other row keeps its results,
#   timings and attempts bitwise (matched by /tasks/key), and the grown file equals a fresh run
#   of the edited sweep; qsweep eval of the inserted simulate task gives the numbers of its row;
# - two halves of a study, each with a simulate block, merged in both orders: A+B equals a run of
#   the whole sweep, B+A holds the same rows in another order and, grown with the whole sweep
#   (nothing runs), equals it too;
# - a block repeating tasks of an earlier block adds only its new tasks, and plan says so;
# - an edit that drops a finished task is refused, naming it, the file untouched.
# Usage: run_keys.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"

head="name: keys
seed: 11
blocks:"
exact_block() {  # lambda values
  cat <<YAML
  - method: exact
    family: ring
    N: 4
    lambda: [$1]
    qmax: 8
YAML
}
simulate_block() {  # lambda values
  cat <<YAML
  - method: simulate
    policy: jsq
    family: complete
    d: 2
    N: 4
    lambda: [$1]
    horizon: 300
    warmup: 30
    replications: 2
    qmax: 8
YAML
}
ldp_block='  - method: ldp
    policy: jsq
    estimator: monte_carlo
    n: 4
    j: 2
    T: 1
    lambda: 0.9
    samples: 200'
{ echo "$head"; exact_block "0.3, 0.6"; simulate_block "0.5, 0.8"; echo "$ldp_block"; } >v1.yaml
{ echo "$head"; exact_block "0.3, 0.45, 0.6"; simulate_block "0.5, 0.65, 0.8"; echo "$ldp_block"; } >v2.yaml

mpi 3 "$QSWEEP" run v1.yaml -o grown.h5 --quiet
cp grown.h5 v1.h5
mpi 2 "$QSWEEP" run v2.yaml -o grown.h5 --resume --quiet 2>grow.txt || fail "grow: $(cat grow.txt)"
grep -q "grown from 5 to 7 tasks of v2.yaml (5 finished rows kept)" grow.txt ||
  fail "no growth message: $(cat grow.txt)"
"$PYTHON" - v1.h5 grown.h5 <<'PY' || fail "the kept rows changed or more than the new tasks ran"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1]) as a, h5py.File(sys.argv[2]) as b:
    ka, kb = a["tasks/key"][()], b["tasks/key"][()]
    assert len(set(kb)) == len(kb) == 7, kb
    where = {k: i for i, k in enumerate(kb)}
    new = sorted(set(range(len(kb))) - {where[k] for k in ka})
    assert len(new) == 2, new  # lambda 0.45 (exact) and 0.65 (simulate)
    # Every old row, results and timings, bitwise where its key now sits (it did not run again).
    for group in ("tasks", "exact", "simulate", "ldp"):
        rows_a = a["tasks/id"][()] if group == "tasks" else a[group + "/task_id"][()]
        rows_b = b["tasks/id"][()] if group == "tasks" else b[group + "/task_id"][()]
        at_b = {int(t): r for r, t in enumerate(rows_b)}
        names = [n for n in a[group] if not h5py.h5ds.is_scale(a[group][n].id)]
        for name in names:
            if name in ("id", "task_id", "block", "checksum") or name.endswith("_offset"):
                continue  # the row's place, the seal that covers it, where ragged rows start
            d, e = a[group][name], b[group][name]
            ragged = name + "_offset" in names
            for r, t in enumerate(rows_a):
                rb = at_b[where[ka[t]]]
                if ragged:
                    oa, ob = a[group][name + "_offset"][r], b[group][name + "_offset"][rb]
                    ca, cb = a[group][name + "_count"][r], b[group][name + "_count"][rb]
                    va, vb = d[oa:oa + ca], e[ob:ob + cb]
                else:
                    va, vb = np.asarray(d[r]), np.asarray(e[rb])
                    if d.ndim == 2:  # distributions: the wider file pads with NaN
                        vb = vb[: va.shape[0]]
                same = (np.array_equal(va, vb, equal_nan=True) if va.dtype.kind == "f"
                        else np.array_equal(va, vb))
                assert same, (group, name, int(t))
    # The new tasks ran once; the kept ones were not handed out again.
    assert (b["tasks/attempts"][()] == 1).all()
    assert (b["tasks/status"][()] == 1).all()
PY
mpi 3 "$QSWEEP" run v2.yaml -o fresh.h5 --quiet
$CHECK same grown.h5 fresh.h5
# qsweep eval of a task gives its numbers in any sweep of the same seed: the same key.
"$QSWEEP" eval --method simulate --seed 11 --policy jsq --family complete --d 2 --N 4 \
  --lambda 0.65 --horizon 300 --warmup 30 --replications 2 --qmax 8 --json >eval.json 2>/dev/null
"$PYTHON" - grown.h5 eval.json <<'PY' || fail "eval gives other numbers than the sweep's task"
import json, sys, h5py
with h5py.File(sys.argv[1]) as f, open(sys.argv[2]) as e:
    row = list(f["simulate/lambda"][()]).index(0.65)
    assert json.load(e)["ET"] == float(f["simulate/ET"][row])
PY
"$QSWEEP" verify grown.h5 >/dev/null || fail "the grown file does not verify"

# Two halves, a simulate block in each, merged in both orders.
{ echo "$head"; exact_block "0.3, 0.6"; simulate_block "0.5"; } >half1.yaml
{ echo "$head"; simulate_block "0.7, 0.8"; echo "$ldp_block"; } >half2.yaml
{ echo "$head"; exact_block "0.3, 0.6"; simulate_block "0.5"; simulate_block "0.7, 0.8"; echo "$ldp_block"; } >whole.yaml
mpi 2 "$QSWEEP" run half1.yaml -o a.h5 --quiet
mpi 3 "$QSWEEP" run half2.yaml -o b.h5 --quiet
mpi 2 "$QSWEEP" run whole.yaml -o whole.h5 --quiet
"$QSWEEP" merge a.h5 b.h5 -o ab.h5 >ab.txt || fail "merge a b: $(cat ab.txt)"
"$QSWEEP" merge b.h5 a.h5 -o ba.h5 >ba.txt || fail "merge b a: $(cat ba.txt)"
grep -q "ba.h5: 6 tasks of sweep 'keys'.* 6 finished rows copied" ba.txt || fail "$(cat ba.txt)"
$CHECK same ab.h5 whole.h5 --other-sweep-text
"$QSWEEP" verify ba.h5 >/dev/null || fail "the merged file does not verify"
mpi 2 "$QSWEEP" run whole.yaml -o ba.h5 --resume --quiet 2>reorder.txt || fail "$(cat reorder.txt)"
grep -q "grown from 6 to 6 tasks of whole.yaml (6 finished rows kept)" reorder.txt ||
  fail "no reorder message: $(cat reorder.txt)"
$CHECK same ba.h5 whole.h5

# A block that repeats tasks of an earlier one: only its new task is planned, and said so.
{ echo "$head"; simulate_block "0.5, 0.8"; simulate_block "0.5, 0.65, 0.8"; } >dup.yaml
"$QSWEEP" plan dup.yaml >dup.txt
grep -q "3 tasks, 2 more left out as duplicates of tasks of earlier blocks" dup.txt ||
  fail "no duplicates line: $(cat dup.txt)"

# An edit that drops a finished task is refused, naming it; the file is untouched.
sum=$(sha256sum grown.h5)
{ echo "$head"; exact_block "0.3, 0.45, 0.6"; simulate_block "0.5, 0.8"; echo "$ldp_block"; } >dropped.yaml
expect_exit 2 mpi 2 "$QSWEEP" run dropped.yaml -o grown.h5 --resume --quiet 2>dropped.txt
grep -q "task 4 of grown.h5 (simulate .*lambda=0.65.*) holds results and is not in dropped.yaml (key [0-9a-f]\{32\}); --resume keeps every finished row" dropped.txt ||
  fail "no clear message for a dropped task: $(cat dropped.txt)"
[ "$(sha256sum grown.h5)" = "$sum" ] || fail "a refused --resume changed the file"
echo "PASS: tasks keep their numbers wherever an edit moves them; halves merge in either order"
