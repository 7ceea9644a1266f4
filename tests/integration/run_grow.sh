#!/usr/bin/env bash
# Growing a study (docs/running.md, "Growing a study"): a sweep run to the end, then extended by a
# value of an existing block (the later tasks move) and a new block, and --resume (killed once
# and stopped by SIGTERM once while the grown file is made, which leaves the old file whole and,
# after SIGTERM, no temporary file; the next run removes a killed one's): only the new
# tasks run (earlier rows keep their results, timings, ranks and attempts = 1, matched by task
# content), and the grown file equals a fresh run of the extended sweep (every dataset but
# timings, rank and checksum, attempts included: all 1). Then a second growth (a block at the end
# behind a random block, whose ids stay, and a wider distribution), a --resume with nothing to
# do, and the refusal of a changed value of a finished task (exit 2, the file untouched).
# Insertions before random tasks: run_keys.sh.
# Usage: run_grow.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"
GROW="$PYTHON $SOURCE_DIR/tests/integration/grow_check.py"

exact_block() {  # lambda values
  cat <<YAML
  - method: exact
    family: [complete, ring]
    N: 4
    lambda: [$1]
    qmax: 10
YAML
}
meanfield_block() {
  cat <<'YAML'
  - method: meanfield
    policy: power_of_d
    policy_d: [1, 2]
    lambda: 0.7
YAML
}
simulate_block() {
  cat <<'YAML'
  - method: simulate
    policy: redundancy_coc
    family: ring
    N: 4
    lambda: [0.5, 0.8]
    horizon: 2000
    warmup: 100
    replications: 2
    qmax: 8
YAML
}
last_block() {
  cat <<'YAML'
  - method: exact
    family: path
    N: 4
    lambda: 0.5
    qmax: 15
YAML
}
head="name: grow-it
seed: 5
blocks:"
{ echo "$head"; exact_block "0.3, 0.6"; meanfield_block; } >v1.yaml
{ echo "$head"; exact_block "0.3, 0.6, 0.8"; meanfield_block; simulate_block; } >v2.yaml
{ echo "$head"; exact_block "0.3, 0.6, 0.8"; meanfield_block; simulate_block; last_block; } >v3.yaml

mpi 2 "$QSWEEP" run v1.yaml -o grown.h5 --quiet
cp grown.h5 v1.h5
# Killed while the grown file is half made (held before the row of task 1 is copied): the old
# file is untouched and verifies.
hold_tasks hold 1
start_job -n 2 "$QSWEEP" run v2.yaml -o grown.h5 --resume --quiet
wait_started "$JOB_PID"
[ "$STARTED_TASK" = 1 ] || fail "held task $STARTED_TASK, expected 1"
[ -e grown.h5.combined ] || fail "no grown file being made"
kill_job
no_hold
cmp -s grown.h5 v1.h5 || fail "a growth killed half way changed the file"
"$QSWEEP" verify grown.h5 >/dev/null || fail "the file does not verify after a killed growth"
# SIGTERM to every rank (as SLURM sends it) while the grown file is made: the growth stops before
# its next rows, removes the new file and ends with exit code 4, the old file untouched.
hold_tasks hold 1
start_job -n 2 "$QSWEEP" run v2.yaml -o grown.h5 --resume --quiet 2>term.txt
wait_started "$JOB_PID"
# shellcheck disable=SC2046  # one pid per word
kill -TERM $(job_ranks "$JOB_PID")
release
no_hold
rc=0
wait "$JOB_PID" || rc=$?
[ "$rc" -eq 4 ] || fail "a growth stopped by SIGTERM exited with $rc, expected 4: $(cat term.txt)"
grep -q "stopped by a signal while growing grown.h5: it is as it was" term.txt ||
  fail "no message for a stopped growth: $(cat term.txt)"
cmp -s grown.h5 v1.h5 || fail "a growth stopped by SIGTERM changed the file"
[ ! -e grown.h5.combined ] || fail "a growth stopped by SIGTERM left its temporary file"
# The killed growth's temporary file (made again here, as kill -9 leaves it) is removed, and said
# so, by the next run on the file, which holds its writer lock.
cp v1.h5 grown.h5.combined
mpi 3 "$QSWEEP" run v2.yaml -o grown.h5 --resume --quiet 2>grow2.txt || fail "grow to v2: $(cat grow2.txt)"
grep -q "removed grown.h5.combined, left by a job that was killed" grow2.txt ||
  fail "no message for the removed temporary file: $(cat grow2.txt)"
grep -q "grown from 6 to 10 tasks of v2.yaml (6 finished rows kept)" grow2.txt ||
  fail "no growth message: $(cat grow2.txt)"
[ ! -e grown.h5.combined ] || fail "the temporary file is left behind"
$GROW kept v1.h5 grown.h5
"$QSWEEP" verify grown.h5 >/dev/null || fail "the grown file does not verify"
cp grown.h5 v2.h5
mpi 2 "$QSWEEP" run v3.yaml -o grown.h5 --resume --quiet 2>grow3.txt || fail "grow to v3: $(cat grow3.txt)"
grep -q "grown from 10 to 11 tasks" grow3.txt || fail "no growth message: $(cat grow3.txt)"
$GROW kept v2.h5 grown.h5
"$PYTHON" - v2.h5 grown.h5 <<'PY' || fail "the simulate rows moved or changed"
import sys, h5py
with h5py.File(sys.argv[1]) as a, h5py.File(sys.argv[2]) as b:
    assert (a["simulate/task_id"][()] == b["simulate/task_id"][()]).all()
    assert (a["tasks/checksum"][8:10] == b["tasks/checksum"][8:10]).all()  # same ids, same seal
    assert a["exact/pmf"].shape[1] == 11 and b["exact/pmf"].shape[1] == 16
    # Each growth appends to the history: the first run, then the two --resume that grew it.
    history = b.attrs["history"].splitlines()
    assert len(history) == 3 and a.attrs["history"].splitlines() == history[:2], history
    assert "run v1.yaml -o grown.h5" in history[0] and "run v2.yaml" in history[1], history
    assert "run v3.yaml -o grown.h5 --resume" in history[2] and "2 MPI ranks" in history[2]
PY

# The grown file is in the order of v3's plan: bytewise equal to a fresh run of v3 (rows matched
# by content are rows of the same id).
mpi 3 "$QSWEEP" run v3.yaml -o fresh.h5 --quiet
$CHECK same grown.h5 fresh.h5
"$QSWEEP" verify grown.h5 >/dev/null || fail "the grown file does not verify"

# Nothing left to run: --resume with the same sweep changes no row.
cp grown.h5 v3.h5
mpi 2 "$QSWEEP" run v3.yaml -o grown.h5 --resume --quiet
$CHECK same grown.h5 v3.h5

# Refusals, with the file untouched.
sum=$(sha256sum grown.h5)
{ echo "$head"; exact_block "0.3, 0.65, 0.8"; meanfield_block; simulate_block; last_block; } >changed.yaml
expect_exit 2 mpi 2 "$QSWEEP" run changed.yaml -o grown.h5 --resume --quiet 2>changed.txt
grep -q "grown.h5 holds the results of a different plan (plan hash [0-9a-f]*, changed.yaml expands to [0-9a-f]*): task 1 of grown.h5 (exact complete N=4 d=2 lambda=0.6 qmax=10) holds results and is not in changed.yaml (key [0-9a-f]*); --resume keeps every finished row" changed.txt ||
  fail "no clear message for a changed value: $(cat changed.txt)"
[ "$(sha256sum grown.h5)" = "$sum" ] || fail "a refused --resume changed the file"
[ ! -e grown.h5.combined ] || fail "a refused --resume left a temporary file"
echo "PASS: a finished study grows with --resume; a changed finished task is refused"
