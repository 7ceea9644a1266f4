#!/usr/bin/env bash
# qsweep merge (docs/running.md, "Merging files"): the files of two halves of one study (two
# sweep files, each half of the blocks) merge into the file of the whole (every dataset equal to a
# fresh run of the whole sweep but timings, rank and checksum; the same plan hash), which
# verifies and resumes with the whole sweep. A file and a larger file of the same study (a random
# block in both) merge into the larger, every shared task compared. A task finished in
# both files with other results (a value changed and the row sealed again, so that the file
# verifies) is refused, as are files of different studies; nothing is written then. A merge
# stopped by SIGTERM writes nothing (exit 4); the next merge removes a killed one's temporary file.
# Usage: run_merge.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"

head="name: study
seed: 5
blocks:"
first_half='  - method: exact
    family: [complete, ring]
    N: 4
    lambda: [0.3, 0.6]
    qmax: 10
  - method: meanfield
    policy: power_of_d
    policy_d: [1, 2]
    lambda: 0.7'
second_half='  - method: exact
    family: path
    N: 4
    lambda: [0.5, 0.7]
    qmax: 15
  - method: meanfield
    policy: power_of_d
    policy_d: 3
    lambda: [0.5, 0.9]'
simulate='  - method: simulate
    policy: redundancy_coc
    family: ring
    N: 4
    lambda: [0.5, 0.8]
    horizon: 2000
    warmup: 100
    replications: 2
    qmax: 8'
printf '%s\n%s\n' "$head" "$first_half" >half1.yaml
printf '%s\n%s\n' "$head" "$second_half" >half2.yaml
printf '%s\n%s\n%s\n' "$head" "$first_half" "$second_half" >whole.yaml

mpi 2 "$QSWEEP" run half1.yaml -o a.h5 --quiet
mpi 3 "$QSWEEP" run half2.yaml -o b.h5 --quiet
mpi 2 "$QSWEEP" run whole.yaml -o whole.h5 --quiet
"$QSWEEP" merge a.h5 b.h5 -o c.h5 >merge.txt || fail "merge failed: $(cat merge.txt)"
grep -q "c.h5: 10 tasks of sweep 'study'.* 10 finished rows copied" merge.txt ||
  fail "merge summary: $(cat merge.txt)"
$CHECK same c.h5 whole.h5 --other-sweep-text
"$QSWEEP" verify c.h5 >/dev/null || fail "the merged file does not verify"
# The merged file's history: the runs of both halves (2 and 3 ranks), then the merge.
"$PYTHON" - "$QSWEEP" <<'PY' || fail "history of the merged file"
import json, subprocess, sys
import h5py
def history(path):
    with h5py.File(path, "r") as f:
        return f.attrs["history"].splitlines()
a, b, c = history("a.h5"), history("b.h5"), history("c.h5")
assert len(a) == 1 and "run half1.yaml -o a.h5" in a[0] and "2 MPI ranks" in a[0], a
assert len(b) == 1 and "run half2.yaml -o b.h5" in b[0] and "3 MPI ranks" in b[0], b
assert c[:2] == a + b and len(c) == 3 and "merge a.h5 b.h5 -o c.h5" in c[2], c
with h5py.File("c.h5", "r") as f:
    assert c[2].startswith(f.attrs["created"] + " "), (c[2], f.attrs["created"])
status = json.loads(subprocess.run([sys.argv[1], "status", "c.h5", "--json"], check=True,
                                   capture_output=True, text=True).stdout)
assert status["history"] == c, status["history"]
text = subprocess.run([sys.argv[1], "status", "c.h5"], check=True, capture_output=True,
                      text=True).stdout
assert "history:  " + c[0] in text and c[2] in text, text
PY
cp c.h5 c0.h5
mpi 2 "$QSWEEP" run whole.yaml -o c.h5 --resume --quiet  # the same plan: nothing to run
$CHECK same c.h5 c0.h5

# A file and a larger one of the same study, with a random block.
printf '%s\n%s\n%s\n' "$head" "$first_half" "$simulate" >x.yaml
printf '%s\n%s\n%s\n%s\n' "$head" "$first_half" "$simulate" "$second_half" >y.yaml
mpi 2 "$QSWEEP" run x.yaml -o x.h5 --quiet
mpi 3 "$QSWEEP" run y.yaml -o y.h5 --quiet
"$QSWEEP" merge x.h5 y.h5 -o z.h5 >merge2.txt || fail "merge of a file into a larger one failed"
$CHECK same z.h5 y.h5 --other-sweep-text

# A conflicting duplicate: task 0's EQ changed in a copy of y.h5 and its row sealed again (the
# checksum of docs/results-layout.md, XXH3-64 through Debian's libxxhash), so that it verifies.
cp y.h5 y2.h5
"$PYTHON" - y2.h5 <<'PY' || fail "could not reseal the changed row"
import ctypes, sys
import h5py
import numpy as np
xxh = ctypes.CDLL("libxxhash.so.0")
xxh.XXH3_64bits.restype = ctypes.c_uint64
xxh.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
with h5py.File(sys.argv[1], "r+") as f:
    t, g = f["tasks"], f["exact"]
    g["EQ"][0] = g["EQ"][0] * (1 + 1e-9)
    task = int(g["task_id"][0])
    one = slice(task, task + 1)
    parts = [t[n][one].tobytes() for n in ("id", "method", "block", "seed", "key", "round",
                                           "status", "error", "warning", "wall_seconds", "rank",
                                           "reused_from")]
    names = [n for n in g if not h5py.h5ds.is_scale(g[n].id)]
    for n in names:
        if n.endswith(("_offset", "_count")) and n.rsplit("_", 1)[0] in names:
            continue
        if n + "_offset" in names:  # ragged: row 0's reserved slots, then its count
            parts += [g[n][0:g[n + "_offset"][1]].tobytes(), g[n + "_count"][0:1].tobytes()]
        else:
            parts.append(g[n][0:1].tobytes())
    data = b"".join(parts)
    t["checksum"][task] = xxh.XXH3_64bits(data, len(data)) or 1
PY
"$QSWEEP" verify y2.h5 >/dev/null || fail "the resealed file does not verify"
expect_exit 2 "$QSWEEP" merge x.h5 y2.h5 -o bad.h5 2>conflict.txt
grep -q "task 0 (exact .*) has other results in y2.h5 (its task 0) than in x.h5 (its task 0): /exact/EQ differs" conflict.txt ||
  fail "no clear message for a conflict: $(cat conflict.txt)"
[ ! -e bad.h5 ] && [ ! -e bad.h5.combined ] || fail "a refused merge left a file"

# Files of different studies; an existing output.
sed 's/^name: study/name: other/' half2.yaml >other.yaml
mpi 2 "$QSWEEP" run other.yaml -o other.h5 --quiet
expect_exit 2 "$QSWEEP" merge a.h5 other.h5 -o bad.h5 2>other.txt
grep -q "a.h5 holds sweep 'study', other.h5 sweep 'other'" other.txt || fail "$(cat other.txt)"
expect_exit 2 "$QSWEEP" merge a.h5 b.h5 -o c.h5
"$QSWEEP" merge a.h5 b.h5 -o c.h5 --force >/dev/null

# A merge stopped by SIGTERM while it writes (held before the row of task 1 is copied) writes
# nothing and ends with exit code 4; a killed merge's temporary file is removed by the next one.
hold_tasks hold 1
"$QSWEEP" merge a.h5 b.h5 -o stopped.h5 2>stopped.txt &
JOB_PID=$!
wait_started "$JOB_PID"
kill -TERM "$JOB_PID"
release
no_hold
rc=0
wait "$JOB_PID" || rc=$?
[ "$rc" -eq 4 ] || fail "a merge stopped by SIGTERM exited with $rc, expected 4: $(cat stopped.txt)"
grep -q "stopped by a signal: stopped.h5 was not written" stopped.txt || fail "$(cat stopped.txt)"
[ ! -e stopped.h5 ] && [ ! -e stopped.h5.combined ] || fail "a stopped merge left a file"
cp a.h5 stopped.h5.combined
"$QSWEEP" merge a.h5 b.h5 -o stopped.h5 >/dev/null 2>removed.txt
grep -q "removed stopped.h5.combined, left by a job that was killed" removed.txt ||
  fail "no message for the removed temporary file: $(cat removed.txt)"
[ ! -e stopped.h5.combined ] || fail "the killed merge's temporary file is left"
# One that cannot be removed (a directory that is not empty) stops the merge with its reason.
mkdir -p stuck.h5.combined/inside
expect_exit 1 "$QSWEEP" merge a.h5 b.h5 -o stuck.h5 2>stuck.txt
grep -q "cannot remove stuck.h5.combined, left by a job that was killed: Directory not empty" \
  stuck.txt || fail "$(cat stuck.txt)"
[ ! -e stuck.h5 ] || fail "a merge that could not remove a left-over wrote its output"
echo "PASS: merge of two halves equals the whole; conflicts and other studies are refused"
