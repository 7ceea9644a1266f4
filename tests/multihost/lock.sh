#!/usr/bin/env bash
# One writer per results file across namespace hosts (the file on the shared file system, the
# lock an fcntl OFD lock that every host sees). While run A (hosts 1 and 2, launched from host 1)
# holds the file — a held task keeps it running — a second run started from another host is
# refused with exit 2 and touches nothing: plain from host 2, --force across hosts 3 and 2,
# --resume from host 3; the refusal and `qsweep status` (from host 3) name A's rank 0: host 1's
# hostname and that process's pid. When rank 0's host dies (kill -9 of every process on it) the
# lock goes with it: a resume from host 2 takes the file. Then pairs of runs from different hosts
# at random offsets (0-2 s): never two writers, the file always ends complete and equal to an
# uninterrupted run, with no lock or .partial left behind.
# Usage: lock.sh QSWEEP_BINARY SOURCE_DIR   (QSWEEP_LOCK_SEED=N repeats a sequence of pairs)
source "$(dirname "$0")/multihost_lib.bash" "$@"
# shellcheck source=tests/integration/lock_pairs.bash
source "$SOURCE_DIR/tests/integration/lock_pairs.bash"
sweep=$SOURCE_DIR/tests/integration/run_kill.yaml
RANDOM=${QSWEEP_LOCK_SEED:-$$}
echo "pairs from QSWEEP_LOCK_SEED=${QSWEEP_LOCK_SEED:-$$}"
hosts_up 3
PAIRS=${QSWEEP_LOCK_PAIRS:-8}

use_hosts none
mpi 2 "$QSWEEP" run "$sweep" -o reference.h5 --quiet
read -ra all_tasks <<<"$(task_ids reference.h5)"

# rank0_of_job PID: the pid of the job's rank on host 1 (rank 0: the spec puts it there alone).
rank0_of_job() {
  local rank
  for rank in $(job_ranks "$1"); do
    if [ "$(host_of_pid "$rank")" = 1 ]; then echo "$rank"; fi
  done
}
expect_refused() {  # $1 log of the refused run, $2 the holder's pid
  grep -q "out.h5 is being written by another run (host $(host_name 1), pid $2, started .*command: .*$sweep" "$1" ||
    { cat "$1"; fail "the refusal does not name the holder (host $(host_name 1), pid $2)"; }
}

spec=1:1,2:1
hold_tasks hold "${all_tasks[@]}"
use_hosts "$spec"
start_job -n 2 --oversubscribe "$QSWEEP" run "$sweep" -o out.h5 --quiet 2>a.log
wait_started "$JOB_PID"
wait_started "$JOB_PID"
no_hold
check_job_across_hosts "$JOB_PID" "$spec"
holder=$(rank0_of_job "$JOB_PID")
[ -n "$holder" ] || fail "no rank of the job on host 1"
sum=$(sha256sum out.h5)
expect_exit 2 on_host 2 "$QSWEEP" run "$sweep" -o out.h5 --quiet 2>b.log
expect_refused b.log "$holder"
use_hosts 3:1,2:1
expect_exit 2 mpi 2 "$QSWEEP" run "$sweep" -o out.h5 --quiet --force 2>b.log
expect_refused b.log "$holder"
expect_exit 2 on_host 3 "$QSWEEP" run "$sweep" -o out.h5 --quiet --resume 2>b.log
expect_refused b.log "$holder"
[ "$(sha256sum out.h5)" = "$sum" ] || fail "a refused run changed the file"
[ ! -e out.h5.partial ] || fail "a refused --force made a .partial"
on_host 3 "$QSWEEP" status out.h5 >status.log || true
grep -q "^writing:  host $(host_name 1), pid $holder," status.log || { cat status.log; fail "status shows no holder"; }
release_all
wait "$JOB_PID" || fail "the holding run failed"
stop_releasing
[ ! -e out.h5.lock ] || fail "a finished run left its lock file"
$CHECK same out.h5 reference.h5 --ignore-attempts
echo "refused from hosts 2 and 3 while host 1's rank 0 (pid $holder) held the file"

# Rank 0's host dies while the lock is held: the lock goes with its processes.
rm -f out.h5
hold_tasks hold "${all_tasks[@]}"
use_hosts "$spec"
start_job -n 2 --oversubscribe "$QSWEEP" run "$sweep" -o out.h5 --quiet
wait_started "$JOB_PID"
no_hold
# shellcheck disable=SC2046  # one pid per word
kill -9 $(host_pids 1)
wait_host_empty 1
wait_host_empty 2  # the ranks of host 2 end once the launcher is gone
wait "$JOB_PID" 2>/dev/null || true
[ -e out.h5.lock ] || fail "expected the killed run's lock file to be left behind"
use_hosts 2:1,3:1
mpi 2 "$QSWEEP" run "$sweep" -o out.h5 --quiet --resume
expect_exit 0 on_host 3 "$QSWEEP" verify out.h5 >/dev/null
$CHECK same out.h5 reference.h5 --ignore-attempts
[ ! -e out.h5.lock ] || fail "the resumed run left a lock file"
echo "host 1 died holding the lock; host 2 resumed"

# --- pairs from different hosts at random offsets ------------------------------------------------
for pair in $(seq 1 "$PAIRS"); do
  rm -f out.h5
  a_flags=$(flags_of)
  b_flags=$(flags_of)
  b_host=$((2 + RANDOM % 2))
  offset_ms=$((RANDOM % 2000))
  use_hosts 1:1,2:1
  # shellcheck disable=SC2086
  start_job -n 2 --oversubscribe "$QSWEEP" run "$sweep" -o out.h5 --quiet $a_flags 2>a.log
  a_pid=$JOB_PID
  sleep "$(printf '%d.%03d' $((offset_ms / 1000)) $((offset_ms % 1000)))"
  b_rc=0
  # shellcheck disable=SC2086
  on_host "$b_host" "$QSWEEP" run "$sweep" -o out.h5 --quiet $b_flags 2>b.log || b_rc=$?
  a_rc=0
  wait "$a_pid" || a_rc=$?
  check_pair "$pair" "$a_rc" "$b_rc" "$a_flags" "$b_flags"
  echo "pair $pair: A (hosts 1, 2) '${a_flags:-plain}' -> $a_rc," \
    "B (host $b_host) '${b_flags:-plain}' after ${offset_ms} ms -> $b_rc"
done
echo "$refusals of the refusals named a running holder"
echo "PASS: one writer per file across hosts"
