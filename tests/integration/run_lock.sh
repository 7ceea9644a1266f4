#!/usr/bin/env bash
# One writer per results file. While a run holds the file (a held task keeps it running, so this
# does not depend on speed) a second run — plain, --resume or --force — is refused with exit 2,
# names the holder and touches nothing; status shows the holder; kill -9 of the whole job leaves
# a lock that never blocks --resume. Then 20 pairs of runs on one file started at random offsets
# (0-2 s) with random flags: never two writers (two plain runs: exactly one succeeds; a refused
# run says why), and the file always ends complete, verified and equal to an uninterrupted run,
# with no lock or .partial left behind.
# Usage: run_lock.sh QSWEEP_BINARY SOURCE_DIR   (QSWEEP_LOCK_SEED=N repeats a sequence of pairs)
source "$(dirname "$0")/run_lib.bash" "$@"
# shellcheck source=tests/integration/lock_pairs.bash
source "$SOURCE_DIR/tests/integration/lock_pairs.bash"
sweep=$SOURCE_DIR/tests/integration/run_kill.yaml
RANDOM=${QSWEEP_LOCK_SEED:-$$}
echo "pairs from QSWEEP_LOCK_SEED=${QSWEEP_LOCK_SEED:-$$}"

mpi 2 "$QSWEEP" run "$sweep" -o reference.h5 --quiet
read -ra all_tasks <<<"$(task_ids reference.h5)"

# Refusals while run A holds a task (every task held: A cannot finish before it is released).
expect_refused() {  # $1 log of the refused run
  grep -q "out.h5 is being written by another run (host $(hostname), pid [0-9]*, started .*command: .*$sweep" "$1" ||
    { cat "$1"; fail "the refusal does not name the holder"; }
}
hold_tasks hold "${all_tasks[@]}"
start_job -n 2 --oversubscribe "$QSWEEP" run "$sweep" -o out.h5 --quiet 2>a.log
# Both ranks compute: once each holds a task, nothing is written until the release.
wait_started "$JOB_PID"
wait_started "$JOB_PID"
no_hold
sum=$(sha256sum out.h5)
expect_exit 2 "$QSWEEP" run "$sweep" -o out.h5 --quiet 2>b.log
expect_refused b.log
expect_exit 2 mpi 2 "$QSWEEP" run "$sweep" -o out.h5 --quiet --force 2>b.log
expect_refused b.log
expect_exit 2 "$QSWEEP" run "$sweep" -o out.h5 --quiet --resume 2>b.log
expect_refused b.log
[ "$(sha256sum out.h5)" = "$sum" ] || fail "a refused run changed the file"
[ ! -e out.h5.partial ] || fail "a refused --force made a .partial"
"$QSWEEP" status out.h5 >status.log || true
grep -q "^writing:  host $(hostname), pid" status.log || { cat status.log; fail "status shows no holder"; }
release_all
wait "$JOB_PID" || fail "the holding run failed"
stop_releasing
[ ! -e out.h5.lock ] || fail "a finished run left its lock file"
$CHECK same out.h5 reference.h5 --ignore-attempts

# kill -9 of everything while the lock is held: the lock goes with the processes.
rm -f out.h5
hold_tasks hold "${all_tasks[@]}"
start_job -n 2 --oversubscribe "$QSWEEP" run "$sweep" -o out.h5 --quiet
wait_started "$JOB_PID"
kill_job
no_hold
[ -e out.h5.lock ] || fail "expected the killed run's lock file to be left behind"
mpi 2 "$QSWEEP" run "$sweep" -o out.h5 --quiet --resume
expect_exit 0 "$QSWEEP" verify out.h5 >/dev/null
$CHECK same out.h5 reference.h5 --ignore-attempts
[ ! -e out.h5.lock ] || fail "the resumed run left a lock file"

# --- 20 pairs at random offsets ------------------------------------------------------------------
for pair in $(seq 1 20); do
  rm -f out.h5
  a_flags=$(flags_of)
  b_flags=$(flags_of)
  offset_ms=$((RANDOM % 2000))
  # shellcheck disable=SC2086
  mpirun -n 2 --oversubscribe "$QSWEEP" run "$sweep" -o out.h5 --quiet $a_flags 2>a.log &
  a_pid=$!
  sleep "$(printf '%d.%03d' $((offset_ms / 1000)) $((offset_ms % 1000)))"
  b_rc=0
  # shellcheck disable=SC2086
  "$QSWEEP" run "$sweep" -o out.h5 --quiet $b_flags 2>b.log || b_rc=$?
  a_rc=0
  wait "$a_pid" || a_rc=$?
  check_pair "$pair" "$a_rc" "$b_rc" "$a_flags" "$b_flags"
  echo "pair $pair: A '${a_flags:-plain}' -> $a_rc, B '${b_flags:-plain}' after ${offset_ms} ms -> $b_rc"
done
echo "$refusals of the refusals named a running holder"
echo "PASS: one writer per file"
