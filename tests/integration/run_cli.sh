#!/usr/bin/env bash
# `qsweep run` as a user meets it: bad input (exit 2, nothing written, one message), a mis-launch
# (several SLURM tasks, one MPI rank) refused, an existing file is never replaced without
# --force, --resume checks the plan, status and export, the exit codes, progress redrawn only on
# a terminal outside a launcher, and signals (SIGUSR1 through mpirun drains, SIGTERM stops at
# once; exit 4, resumable).
# Usage: run_cli.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"
mixed=$SOURCE_DIR/tests/integration/run_mixed.yaml
long=$SOURCE_DIR/tests/integration/run_kill.yaml

# --- bad input: exit 2 before anything is written, the message printed once (by rank 0) -------
printf 'name: bad\nblocks:\n  - method: exact\n    family: ring\n    N: 4\n    lamda: 0.5\n' >bad.yaml
expect_exit 2 mpi 2 "$QSWEEP" run bad.yaml -o bad.h5 2>bad.log
[ ! -e bad.h5 ] && [ ! -e bad.h5.partial ] || fail "bad input wrote a file"
[ "$(grep -c "bad.yaml:6:5: unknown key 'lamda'" bad.log)" -eq 1 ] || { cat bad.log; fail "not one message naming the bad key"; }
expect_exit 2 mpi 2 "$QSWEEP" run "$mixed" 2>/dev/null  # no -o and no output: in the file
expect_exit 2 "$QSWEEP" run "$mixed" -o x.h5 --resume --force 2>/dev/null
# Output paths that cannot be a results file: refused before anything is made.
mkdir existing-dir
expect_exit 2 "$QSWEEP" run "$mixed" -o "" 2>output.log
grep -q "empty value" output.log || { cat output.log; fail "no message for an empty -o"; }
for output in "new-dir/" existing-dir "$(printf 'tab\tname.h5')"; do
  expect_exit 2 mpi 2 "$QSWEEP" run "$mixed" -o "$output" 2>output.log
  [ "$(grep -c '^qsweep: error: ' output.log)" -eq 1 ] || { cat output.log; fail "not one message for -o '$output'"; }
done
[ -z "$(ls -A existing-dir)" ] && [ ! -e new-dir ] || fail "a refused output path made files"

# --- SLURM asked for 3 tasks but MPI sees one rank (qsweep without srun/mpirun in a job) ----------
expect_exit 2 env SLURM_NTASKS=3 "$QSWEEP" run "$mixed" -o alone.h5 2>alone.log
grep -q "SLURM_NTASKS=3.*MPI sees 1 rank.*QSWEEP_ALLOW_SINGLE_RANK=1" alone.log ||
  { cat alone.log; fail "no message naming SLURM_NTASKS and the override"; }
[ ! -e alone.h5 ] && [ ! -e alone.h5.partial ] || fail "a refused launch wrote a file"
expect_exit 2 env SLURM_NPROCS=2 "$QSWEEP" run "$mixed" -o alone.h5 2>/dev/null
env SLURM_NTASKS=3 QSWEEP_ALLOW_SINGLE_RANK=1 "$QSWEEP" run "$mixed" -o alone.h5 --quiet
SLURM_NTASKS=2 mpirun -n 2 --oversubscribe -x SLURM_NTASKS "$QSWEEP" run "$mixed" -o alone.h5 --quiet --force

# --- progress: redrawn in place (ESC [K) on a terminal, plain lines under a launcher -------------
# `script` gives the run a terminal; PMI_RANK is what an MPI launcher (MPICH, srun --mpi=pmi2)
# leaves, and under it the terminal is usually a log on its way (Open MPI's mpirun even gives
# every rank a terminal as stdout).
# A terminal that can erase a line (TERM; the environment running the tests may have none).
TERM=xterm script -qec "'$QSWEEP' run '$mixed' -o tty.h5 --force" /dev/null </dev/null >tty.log
grep -q $'\e\\[K' tty.log || { cat -A tty.log; fail "no progress redrawn on a terminal"; }
TERM=xterm script -qec "env PMI_RANK=0 '$QSWEEP' run '$mixed' -o tty.h5 --force --progress 0.01" /dev/null </dev/null >launcher.log
if grep -q $'\e' launcher.log; then cat -A launcher.log; fail "progress redrawn under a launcher"; fi
grep -q 'qsweep: 34/34 tasks' launcher.log || { cat launcher.log; fail "no progress lines under a launcher"; }

# --- an existing file is refused without --resume / --force ------------------------------------
mpi 2 "$QSWEEP" run "$mixed" -o out.h5 --quiet
sum=$(sha256sum out.h5)
expect_exit 2 mpi 2 "$QSWEEP" run "$mixed" -o out.h5 2>refuse.log
grep -q "out.h5 already exists: use --resume to continue it or --force to replace it" refuse.log ||
  { cat refuse.log; fail "no refusal message"; }
[ "$(sha256sum out.h5)" = "$sum" ] || fail "a refused run changed the file"
mpi 2 "$QSWEEP" run "$mixed" -o out.h5 --quiet --force
"$PYTHON" -c "import h5py,sys; assert '--force' in h5py.File('out.h5','r').attrs['command_line']"
# Resume of a complete file: nothing runs again.
mpi 2 "$QSWEEP" run "$mixed" -o out.h5 --quiet --resume
"$PYTHON" -c "import h5py; assert (h5py.File('out.h5','r')['tasks/attempts'][()] == 1).all()"
# Resume with a sweep file that expands to another plan is refused.
sed 's/qmax: 12/qmax: 13/' "$mixed" >changed.yaml
expect_exit 2 mpi 2 "$QSWEEP" run changed.yaml -o out.h5 --resume 2>changed.log
grep -q "holds the results of a different plan" changed.log || { cat changed.log; fail "no plan message"; }

# --- status and export ---------------------------------------------------------------------------
expect_exit 0 "$QSWEEP" status out.h5 >status.txt
grep -q "^sweep: *run-mixed" status.txt || fail "status shows no sweep name"
grep -q "^unstable (6)" status.txt || fail "status lists no unstable tasks"
"$QSWEEP" status out.h5 --yaml | cmp - "$mixed" || fail "status --yaml is not the sweep file"
"$QSWEEP" export out.h5 --group exact --csv exact.csv
"$QSWEEP" export out.h5 --group ldp >ldp.csv
"$PYTHON" - <<'PY'
import csv, h5py, numpy as np
with h5py.File("out.h5", "r") as f:
    g = f["exact"]
    rows = list(csv.DictReader(open("exact.csv")))
    assert len(rows) == g["task_id"].shape[0]
    assert "pmf" not in rows[0] and "ER_server" not in rows[0] and "status" in rows[0]
    assert list(rows[0])[:3] == ["task_id", "status", "warning"], list(rows[0])[:3]
    warnings = f["tasks/warning"].asstr()[()]
    for i, row in enumerate(rows):
        assert int(row["task_id"]) == g["task_id"][i]
        assert row["warning"] == warnings[g["task_id"][i]], (i, row["warning"])
        assert row["family"] == g["family"][i].decode()
        eq = g["EQ"][i]
        assert (row["EQ"] == "" and np.isnan(eq)) or float(row["EQ"]) == eq, (i, row["EQ"], eq)
        assert row["status"] in ("done", "unstable")
    ldp = list(csv.DictReader(open("ldp.csv")))
    assert [float(r["probability"]) for r in ldp] == f["ldp/probability"][()].tolist()
PY
expect_exit 2 "$QSWEEP" export out.h5 --group nothing 2>/dev/null
# Chosen columns in the order asked for; every group at once into a directory; reasons.
"$QSWEEP" export out.h5 --group exact --columns EQ,lambda,task_id >columns.csv
[ "$(head -1 columns.csv)" = "EQ,lambda,task_id" ] || fail "export --columns: $(head -1 columns.csv)"
"$PYTHON" - <<'PY' || fail "export --columns: other values than the full export"
import csv
full, chosen = list(csv.DictReader(open("exact.csv"))), list(csv.DictReader(open("columns.csv")))
assert [{k: r[k] for k in ("EQ", "lambda", "task_id")} for r in full] == chosen
PY
expect_exit 2 "$QSWEEP" export out.h5 --group exact --columns EQQ 2>columns.err
grep -q "no column 'EQQ'; did you mean EQ?" columns.err || fail "export --columns EQQ: $(cat columns.err)"
mkdir groups
"$QSWEEP" export out.h5 --dir groups
[ "$(cd groups && ls | tr '\n' ' ')" = "exact.csv ldp.csv simulate.csv tasks.csv " ] ||
  fail "export --dir wrote: $(ls groups)"
cmp groups/exact.csv exact.csv || fail "export --dir: exact.csv differs from --group exact"
expect_exit 2 "$QSWEEP" export out.h5 2>all.err
grep -q "need --dir DIR" all.err || fail "export of every group to standard output: $(cat all.err)"
expect_exit 1 "$QSWEEP" export out.h5 --group exact --csv missing/exact.csv 2>missing.err
grep -q "the directory missing does not exist" missing.err || fail "export into a missing directory: $(cat missing.err)"
# Warnings are stored per row and listed by status: a simulation with no event after warm-up
# warns (and has NaN estimates), a healthy one does not.
cat >warn.yaml <<'YAML'
name: warn
seed: 3
blocks:
  - {method: simulate, policy: jsq, family: ring, N: 4, lambda: 0.5, horizon: [0.001, 1000], warmup: 0, replications: 8}
YAML
"$QSWEEP" run warn.yaml -o warn.h5 --quiet
"$QSWEEP" status warn.h5 >warn.txt
grep -q "^warnings (1):" warn.txt || { cat warn.txt; fail "status lists not exactly one warning"; }
grep -q "task 0 (simulate): no event after warm-up" warn.txt || { cat warn.txt; fail "no warning for task 0"; }
"$PYTHON" -c "import h5py, numpy as np; f = h5py.File('warn.h5', 'r'); w = f['tasks/warning'][()]
assert w[0].startswith(b'no event') and w[1] == b'', w; assert np.isnan(f['simulate/EQ'][0])"
expect_exit 2 "$QSWEEP" status bad.yaml 2>/dev/null

# --- signals -------------------------------------------------------------------------------------
# Every task is held (QSWEEP_TEST_HOLD): a signal sent once a held task has started certainly
# finds the run running, each rank's first batch stuck at its first task, most tasks not handed
# out yet.
mpi 2 "$QSWEEP" run "$long" -o reference.h5 --quiet
read -ra every_task <<<"$(task_ids reference.h5)"
# Starts the long sweep on 2 ranks, every task held, and returns once a held task has started;
# JOB_RANKS are the ranks' pids.
start_long() {
  rm -f signal.log
  hold_tasks hold "${every_task[@]}"
  start_job -n 2 --oversubscribe "$QSWEEP" run "$long" -o "$1" --progress 0.1 "${@:2}" 2>signal.log
  wait_started "$JOB_PID"
  JOB_RANKS=$(job_ranks "$JOB_PID")
}
# $1 file, $2 expected exit codes of the stopped run (one, or several separated by spaces), $3
# (optional) "some-done": the stopped run finished some tasks (the batches it drained). No rank
# is left running.
finish_interrupted() {
  local rc=0
  wait "$JOB_PID" || rc=$?
  stop_releasing
  no_hold
  grep -v 'tasks (' signal.log || true
  [[ " $2 " == *" $rc "* ]] || fail "the stopped run exited with $rc, expected ${2// / or }"
  echo "$1: the stopped run exited with $rc"
  # shellcheck disable=SC2086  # one pid per word
  wait_ended $JOB_RANKS
  expect_exit 4 "$QSWEEP" status "$1" >/dev/null
  if [ "${3:-}" = some-done ]; then
    "$PYTHON" -c "import sys, h5py; sys.exit(0 if (h5py.File('$1', 'r')['tasks/status'][()] == 1).any() else 1)" ||
      fail "$1: the drained batches are not done"
  fi
  mpi 2 "$QSWEEP" run "$long" -o "$1" --resume --quiet
  $CHECK same "$1" reference.h5 --ignore-attempts
}
# SIGUSR1 to every rank, as the job scripts send it (usr1_to_job: through Open MPI's mpirun, which
# forwards it; straight to the ranks under MPICH): they drain; exit 4.
# Once rank 0 took the stop (it says so), no batch goes out any more: the held tasks are let go
# and the running batches finish.
start_long usr1.h5
usr1_to_job "$JOB_PID"
wait_for_line signal.log "stop requested: no new tasks" "$JOB_PID"
release_all
finish_interrupted usr1.h5 4 some-done
if [ "$MPI_FAMILY" = mpich ]; then
  # SIGUSR1 to Hydra's mpiexec itself: it forwards it to every rank, which drain, but it reports
  # exit code 0 for the ranks it signalled (whatever they returned; docs/cluster.md) unless it saw
  # one exit first: 0 or 4. The file says what is left to do.
  start_long hydra-usr1.h5
  kill -USR1 "$JOB_PID"
  wait_for_line signal.log "stop requested: no new tasks" "$JOB_PID"
  release_all
  finish_interrupted hydra-usr1.h5 "0 4" some-done
fi
# SIGTERM to every rank (as SLURM and srun send it): stop at once, the held tasks abandoned; exit 4.
start_long term.h5
kill -TERM $(job_ranks "$JOB_PID")
finish_interrupted term.h5 4
grep -q "stop requested: abandoning running tasks" signal.log || fail "no stop message"
# SIGTERM and SIGINT (Ctrl-C) to the launcher. Open MPI's mpirun sends SIGTERM to the ranks, kills
# them a second later and reports 1 itself; the ranks stop in time and the file is resumable.
# MPICH's Hydra forwards the signal to every rank, which stop at once; it reports 0 or 4 (above).
for signal in TERM INT; do
  start_long "ctrl-$signal.h5"
  kill -"$signal" "$JOB_PID"
  if [ "$MPI_FAMILY" = openmpi ]; then
    finish_interrupted "ctrl-$signal.h5" 1
  else
    wait_for_line signal.log "stop requested: abandoning running tasks" "$JOB_PID"
    finish_interrupted "ctrl-$signal.h5" "0 4"
  fi
done

echo "PASS: qsweep run / status / export behave as documented"
