#!/usr/bin/env bash
# Damaged rows are caught and run again. A half-done file is made by stopping a run while held
# tasks keep it running (SIGTERM: exit 4). Then 20 trials: random bytes written into random cells
# (results, parameters, status, the rest of the /tasks row) of random finished rows of a copy;
# `qsweep verify` must flag every damaged copy (exit 5), and `--resume` must end equal to the
# uninterrupted run, verified. Cells are found with h5py (dataset offset + row * element size;
# datasets are contiguous) and written with plain file I/O, as a disk or a stray process would.
# Usage: run_corrupt.sh QSWEEP_BINARY SOURCE_DIR   (QSWEEP_CORRUPT_SEED=N repeats the trials)
source "$(dirname "$0")/run_lib.bash" "$@"
sweep=$SOURCE_DIR/tests/integration/run_mixed.yaml
seed=${QSWEEP_CORRUPT_SEED:-$$}
RANDOM=$seed
echo "trials from QSWEEP_CORRUPT_SEED=$seed"

mpi 2 "$QSWEEP" run "$sweep" -o reference.h5 --quiet
read -ra all_tasks <<<"$(task_ids reference.h5)"

# A half-done file: hold a few random tasks that are still to run (a finished one would never
# start, and the run could end before a held task did), stop once one started; repeat (resuming)
# until at least a third of the tasks are finished and some are not.
unfinished=("${all_tasks[@]}")
for round in 1 2 3 4 5 6 7 8; do
  held=()
  for _ in 1 2; do held+=("${unfinished[RANDOM % ${#unfinished[@]}]}"); done
  hold_tasks hold "${held[@]}"
  start_job -n 2 --oversubscribe "$QSWEEP" run "$sweep" -o half.h5 --quiet --resume 2>/dev/null
  wait_started "$JOB_PID"
  kill -TERM $(job_ranks "$JOB_PID")
  rc=0
  wait "$JOB_PID" || rc=$?
  [ "$rc" -eq 4 ] || fail "the stopped run exited with $rc, expected 4"
  no_hold
  read -ra unfinished <<<"$(unfinished_ids half.h5)"
  if [ $((3 * (${#all_tasks[@]} - ${#unfinished[@]}))) -ge "${#all_tasks[@]}" ]; then break; fi
done
echo "half-done file: ${#unfinished[@]} of ${#all_tasks[@]} tasks not done"
[ "${#unfinished[@]}" -gt 0 ] || fail "the half-done file is complete"
expect_exit 0 "$QSWEEP" verify half.h5 >/dev/null

for trial in $(seq 1 20); do
  cp half.h5 damaged.h5
  "$PYTHON" - "$((seed + trial))" <<'PY' >damage.txt
import random, sys, h5py, numpy as np
rng = random.Random(int(sys.argv[1]))
cells = []  # (dataset, byte offset, bytes) of every cell of one finished row
with h5py.File("damaged.h5", "r") as f:
    status = f["tasks/status"][()]
    finished = [int(i) for i in np.flatnonzero(status != 0)]
    ids = rng.sample(finished, k=min(len(finished), rng.randint(1, 3)))
    for task in ids:
        def add(name, index, width=1):
            d = f[name]
            size = d.dtype.itemsize
            for k in range(width):
                cells.append((task, name, d.id.get_offset() + (index * width + k) * size, size))
        for name in ["id", "method", "block", "seed", "status", "error", "warning", "wall_seconds", "rank",
                     "reused_from"]:
            add("tasks/" + name, task)
        method = f["tasks/method"][task].decode()
        g = f[method]
        row = int(np.flatnonzero(g["task_id"][()] == task)[0])
        for name, d in g.items():
            if name.endswith("_offset") or name.endswith("_count") or h5py.h5ds.is_scale(d.id):
                continue  # offsets are the plan's; named dimensions hold no values
            if name + "_offset" in g:
                start = int(g[name + "_offset"][row])
                end = int(g[name + "_offset"][row + 1]) if row + 1 < g[name + "_offset"].size else d.size
                for k in range(start, end):
                    add(method + "/" + name, k)
                add(method + "/" + name + "_count", row)
            elif d.ndim == 2:
                add(method + "/" + name, row, d.shape[1])
            else:
                add(method + "/" + name, row)
# Several random cells; in each one random byte, changed for sure (XOR with a non-zero value).
with open("damaged.h5", "r+b") as out:
    for task, name, offset, size in rng.sample(cells, k=min(len(cells), rng.randint(1, 4))):
        at = offset + rng.randrange(size)
        out.seek(at)
        old = out.read(1)[0]
        out.seek(at)
        out.write(bytes([old ^ rng.randint(1, 255)]))
        print(f"task {task}: {name} byte {at - offset}")
PY
  rc=0
  "$QSWEEP" verify damaged.h5 >verify.log || rc=$?
  [ "$rc" -eq 5 ] || { cat damage.txt verify.log; fail "trial $trial: verify exited with $rc, expected 5 (damaged)"; }
  mpi 2 "$QSWEEP" run "$sweep" -o damaged.h5 --quiet --resume 2>resume.log
  grep -q "rows failed verification; running them again" resume.log || { cat resume.log; fail "trial $trial: resume did not report the damage"; }
  expect_exit 0 "$QSWEEP" verify damaged.h5 >/dev/null
  $CHECK same damaged.h5 reference.h5 --ignore-attempts >/dev/null ||
    { cat damage.txt; fail "trial $trial: the resumed file differs from the uninterrupted run"; }
  echo "trial $trial: $(wc -l <damage.txt) damaged cells in $(grep -c '^  task' verify.log) rows: flagged, resumed to the reference"
done
echo "PASS: damaged rows are flagged by verify and run again by --resume"
