#!/usr/bin/env bash
# A qsweep process that dies of a fatal signal says so on stderr (pid, host, the signal, a
# backtrace) and still dies of that signal. The signal is sent once the process is certainly
# running: `qsweep validate` of a named pipe has opened the pipe (our open for writing returns
# only then) and waits to read the sweep from it.
# Usage: crash_report.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"
mkfifo sweep.yaml
"$QSWEEP" validate sweep.yaml 2>err.log &
pid=$!
exec 3>sweep.yaml  # returns once validate has the pipe open
kill -SEGV "$pid"
rc=0
wait "$pid" || rc=$?
exec 3>&-
[ "$rc" -eq $((128 + 11)) ] || { cat err.log; fail "exit status $rc, expected death by SIGSEGV (139)"; }
grep -q "^qsweep: died (pid $pid on $(hostname)): SIGSEGV (invalid memory access); backtrace" err.log ||
  { cat err.log; fail "no crash report naming the process and the signal"; }
grep -q "qsweep(.*)\[0x[0-9a-f]*\]" err.log || { cat err.log; fail "no backtrace frame of qsweep"; }
echo "PASS: a fatal signal is reported with the process, the signal and a backtrace"
