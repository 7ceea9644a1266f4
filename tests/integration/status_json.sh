#!/usr/bin/env bash
# `qsweep status --json` against its JSON Schema (docs/status.schema.json, with Debian's
# python3-jsonschema) and against the facts of the file: while a run holds a task (the writer,
# each rank's activity with the held task running, pending tasks, exit 4) and after it (done, unstable and warned tasks, exit 0), the JSON
# says what the text summary says.
# Usage: status_json.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"
check_json() {  # check_json FILE.json EXPECTED_EXIT KEY=VALUE...
  "$PYTHON" "$SOURCE_DIR/tests/integration/status_json_check.py" \
    "$SOURCE_DIR/docs/status.schema.json" "$@"
}
cat >status.yaml <<'YAML'
name: status-json
seed: 7
blocks:
  - method: exact
    family: ring
    N: 4
    lambda: [0.5, 2.0]   # 2.0: outside the stability region, stored as unstable
  - method: simulate
    family: ring
    N: 4
    lambda: 0.5
    horizon: 1.0e-9      # no event after warm-up: done, with a warning
    warmup: 0
    replications: 2
YAML

# While a run holds task 0 (a held task keeps it running, whatever the machine's speed).
hold_tasks hold 0
start_job -n 2 "$QSWEEP" run status.yaml -o out.h5 --quiet 2>run.log
wait_started "$JOB_PID"
no_hold
# Rank 0 rewrites the activity file when the running batches change (at most once a second):
# wait until it lists the held task, as long as the run lives.
for ((i = 0; ; i++)); do
  expect_exit 4 "$QSWEEP" status out.h5 --json >running.json
  "$PYTHON" -c 'import json, sys; a = json.load(open(sys.argv[1]))["activity"]
sys.exit(0 if a and any(0 in r["tasks"] for r in a["ranks"]) else 1)' running.json && break
  kill -0 "$JOB_PID" 2>/dev/null || { cat run.log; fail "the run ended while task 0 was held"; }
  ((i < 3000)) || fail "the activity never listed the held task 0: $(cat running.json)"
  sleep 0.1
done
# Which tasks are written by now depends on the order and batching (rows, the unstable one's
# too, are written in batches): exit 4 says some are pending, whatever their number.
check_json running.json 4 writer=held tasks=3 activity=2 running=0
expect_exit 4 "$QSWEEP" status out.h5 >running.txt
grep -Eq '^running: +[0-9]+ tasks? on [12] of 2 ranks' running.txt &&
  grep -Eq '^  rank [01]: tasks? (.*, )?0(,| |$).*last heard' running.txt ||
  { cat running.txt; fail "the text summary does not show the running task"; }
release_all
wait "$JOB_PID" || { cat run.log; fail "the run failed"; }
stop_releasing

expect_exit 0 "$QSWEEP" status out.h5 --json >done.json
check_json done.json 0 writer=none activity=none pending=0 tasks=3 done=2 unstable=1 warned=1
[ ! -e out.h5.activity ] || fail "the activity file is left after the run"
# The text summary counts the same.
"$QSWEEP" status out.h5 >status.txt
grep -Eq '^all +3 +2 +0 +1 +0$' status.txt || { cat status.txt; fail "text and JSON disagree"; }
echo "PASS: status --json matches its schema and the file"
