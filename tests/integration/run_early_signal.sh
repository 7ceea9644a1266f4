#!/usr/bin/env bash
# A stop signal that reaches `qsweep run` while it starts (MPI up, rank 0 reading the sweep file)
# is kept, not fatal: no task starts and the run exits with 4. SIGUSR1 (drain) leaves a complete
# file with every task pending, which --resume finishes; SIGTERM and SIGINT (stop now) end the
# planning before its next task and write nothing (a big sweep plans for seconds), and --resume
# starts the file. The sweep file is a named pipe, so the signal arrives at
# a known moment: after rank 0 opened the file, before it read a byte (the writer's open returns
# only once the reader's has). One rank and several, SIGUSR1 (drain) and SIGTERM (stop now), to
# the launcher and to the ranks.
# Usage: run_early_signal.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"
cat >early.yaml <<'YAML'
name: early
blocks:
  - {method: exact, family: ring, N: 4, lambda: {linspace: [0.1, 0.9, 40]}}
YAML

# $1 ranks (1: started directly, no mpirun), $2 signal, $3 whom it goes to: `launcher` (mpirun,
# or the process itself with one rank) or `ranks` (every rank, as SLURM sends SIGTERM).
signal_during_start_up() {
  local ranks=$1 signal=$2 target=$3 out="early-$1-$2-$3.h5" rc=0
  rm -f sweep.fifo opened go
  mkfifo sweep.fifo
  timeout 120 bash -c 'exec 3>sweep.fifo; touch opened; while [ ! -e go ]; do sleep 0.02; done
                       cat early.yaml >&3' &
  local writer=$!
  if [ "$ranks" -eq 1 ]; then
    "$QSWEEP" run sweep.fifo -o "$out" 2>early.log &
    JOB_PID=$!
  else
    start_job -n "$ranks" --oversubscribe "$QSWEEP" run sweep.fifo -o "$out" 2>early.log
  fi
  for _ in $(seq 1 1200); do [ -e opened ] && break; sleep 0.05; done
  [ -e opened ] || { kill_job; fail "rank 0 never opened the sweep file"; }
  if [ "$target" = ranks ] && [ "$ranks" -gt 1 ]; then
    # shellcheck disable=SC2046  # one pid per word
    kill -"$signal" $(job_ranks "$JOB_PID")
  elif [ "$signal" = USR1 ] && [ "$ranks" -gt 1 ]; then
    usr1_to_job "$JOB_PID"
  else
    kill -"$signal" "$JOB_PID"
  fi
  touch go
  local writer_rc=0
  wait "$writer" || writer_rc=$?
  wait "$JOB_PID" || rc=$?
  sed '/^ *$/d' early.log
  [ "$rc" -eq 4 ] || fail "$ranks rank(s), SIG$signal to the $target during start-up: exit $rc, expected 4"
  [ "$writer_rc" -eq 0 ] || fail "writing the sweep file failed ($writer_rc)"
  if [ "$signal" = USR1 ]; then
    local status_rc=0
    "$QSWEEP" status "$out" >status.txt || status_rc=$?
    [ "$status_rc" -eq 4 ] || fail "qsweep status $out exited with $status_rc, expected 4 (pending)"
    grep -qE '^all +40 +0 +0 +0 +40$' status.txt || { cat status.txt; fail "not every task pending"; }
  else
    local left
    left=$(find . -maxdepth 1 -name "$out*")
    [ -z "$left" ] || fail "SIG$signal while planning left $left; expected nothing written"
    grep -q "stopped by a signal while planning; nothing written" early.log ||
      fail "SIG$signal while planning: no message saying so"
  fi
  mpi 2 "$QSWEEP" run early.yaml -o "$out" --resume --quiet
  expect_exit 0 "$QSWEEP" status "$out" >/dev/null
  echo "$ranks rank(s), SIG$signal to the $target during start-up: exit 4, resumed"
}

signal_during_start_up 1 USR1 launcher
signal_during_start_up 1 TERM launcher
signal_during_start_up 2 USR1 launcher
signal_during_start_up 3 TERM ranks
signal_during_start_up 2 INT ranks
echo "PASS: a stop signal during start-up ends the run with exit code 4; --resume finishes it"
