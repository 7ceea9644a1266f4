#!/usr/bin/env bash
# Refinement rounds through `qsweep run` (issue 33; docs/running.md, "Refinement rounds"):
# - the same refining sweep on 1 rank and on 3 ranks gives identical files (every dataset but the
#   timings, key by key and row by row), several rounds deep, each row's round recorded;
# - killed (kill -9 of the whole job) while a task of a later round runs, and resumed, it ends
#   with the rows of the uninterrupted run (its /thresholds too); the kill is an event (a held
#   task has started);
# - the acceptance of the issue: ring N = 6, E[T] over lambda in [0.05, 0.995] to 0.5%: the
#   refined curve interpolates 1000 exact values within 0.5%, and a uniform grid of ten times
#   its points (less one) does not.
# Usage: run_refine.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"
sweep=$SOURCE_DIR/tests/integration/run_refine.yaml

# --- 1 rank against 3 ranks ---------------------------------------------------------------------
mpi 1 "$QSWEEP" run "$sweep" -o one.h5 --quiet 2>one.log || { cat one.log; fail "1 rank"; }
mpi 3 "$QSWEEP" run "$sweep" -o three.h5 --quiet 2>three.log || { cat three.log; fail "3 ranks"; }
$CHECK same one.h5 three.h5
"$QSWEEP" verify one.h5 >/dev/null || fail "one.h5 does not verify"
grep -q "refinement round 2" one.log || fail "fewer than 2 refinement rounds: $(cat one.log)"
# status counts the tasks of each round: 13 of the sweep itself, then what the rounds added.
"$QSWEEP" status one.h5 >status.txt || true
grep -Eq "^rounds: +[0-9]+ refinement rounds after the sweep's own points; tasks per round: 13, " status.txt ||
  fail "status shows no rounds: $(cat status.txt)"
"$PYTHON" - one.h5 <<'PY' || fail "rounds of one.h5"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    t = f["tasks"]
    status, rnd, block = t["status"][()], t["round"][()], t["block"][()]
    assert (status == 1).all(), "a task not done"
    # Rounds are appended in order; round 0 is the sweep's 2 x 4 + 5 points.
    assert (np.diff(rnd) >= 0).all() and (rnd == 0).sum() == 13, rnd
    keys = t["key"][()]
    assert len(set(keys)) == len(keys), "a key twice"
    mf = f["meanfield"]
    ids, lam, et = mf["task_id"][()], mf["lambda"][()], mf["ET"][()]
    # The threshold: a bracket of E[T] = 5 at most 1e-4 wide among the meanfield points.
    order = np.argsort(lam)
    lam, et = lam[order], et[order]
    i = np.flatnonzero((et[:-1] < 5) & (et[1:] >= 5))
    assert len(i) == 1 and lam[i[0] + 1] - lam[i[0]] <= 1e-4, (lam, et)
    # /thresholds stores it: that bracket, converged, the exact blocks (no crossing) without rows.
    g = f["thresholds"]
    assert list(g["block"][()]) == [1] and g["converged"][0] == 1 and g["found"][0] == 1
    assert (g["bracket_lo"][0], g["bracket_hi"][0]) == (lam[i[0]], lam[i[0] + 1])
    assert g["bracket_lo"][0] <= g["threshold"][0] <= g["bracket_hi"][0]
    print(f"{len(rnd)} tasks in rounds 0..{rnd.max()}, threshold bracket "
          f"[{lam[i[0]]:.6f}, {lam[i[0] + 1]:.6f}]")
PY

# --- kill -9 while a task of round 2 runs, then resume ----------------------------------------
held=$("$PYTHON" -c 'import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r"); r = f["tasks/round"][()]
print(np.flatnonzero(r == 2)[0])' one.h5)
hold_tasks hold "$held"
start_job -n 2 --oversubscribe "$QSWEEP" run "$sweep" -o killed.h5 --quiet 2>killed.log
wait_started "$JOB_PID"
[ "$STARTED_TASK" = "$held" ] || fail "held task $held, $STARTED_TASK started"
kill_job
no_hold
$CHECK snapshot killed.h5 snapshot.npz
"$PYTHON" -c 'import sys, h5py; r = h5py.File(sys.argv[1], "r")["tasks/round"][()]
assert r.max() == 2, r' killed.h5 || fail "the killed file is not at round 2"
mpi 2 "$QSWEEP" run "$sweep" -o killed.h5 --resume --quiet 2>resumed.log ||
  { cat resumed.log; fail "resume"; }
$CHECK resumed killed.h5 one.h5 snapshot.npz --min-kills-in-flight 1
echo "killed at round 2 (task $held in flight) and resumed: the rows of the uninterrupted run"

# --- acceptance: ring N = 6 to 0.5% with at most a tenth of a uniform grid's points -------------
cat >ring.yaml <<'YAML'
name: ring-refined
blocks:
  - method: exact
    family: ring
    N: 6
    qmax: 0
    lambda: {linspace: [0.05, 0.995, 5]}
    refine: {axis: lambda, quantity: ET, tolerance: 0.005, max_points: 400}
YAML
mpi 2 "$QSWEEP" run ring.yaml -o ring.h5 --quiet 2>ring.log || { cat ring.log; fail "ring.yaml"; }
points=$("$PYTHON" -c 'import sys, h5py; print(len(h5py.File(sys.argv[1], "r")["exact/ET"]))' ring.h5)
uniform=$((10 * points - 1))
# The exact curve at 1000 points, and the uniform grid of 10 x points - 1, each a sweep of its own.
for grid in dense:1000 uniform:$uniform; do
  cat >"${grid%%:*}.yaml" <<YAML
name: ${grid%%:*}
blocks:
  - method: exact
    family: ring
    N: 6
    qmax: 0
    lambda: {linspace: [0.05, 0.995, ${grid##*:}]}
YAML
  mpi 2 "$QSWEEP" run "${grid%%:*}.yaml" -o "${grid%%:*}.h5" --quiet
done
"$PYTHON" - ring.h5 dense.h5 uniform.h5 <<'PY' || fail "ring N = 6 acceptance"
import sys, h5py, numpy as np
def curve(path):
    with h5py.File(path, "r") as f:
        x, y = f["exact/lambda"][()], f["exact/ET"][()]
    o = np.argsort(x)
    return x[o], y[o]
rx, ry = curve(sys.argv[1])
dx, dy = curve(sys.argv[2])
ux, uy = curve(sys.argv[3])
assert rx[0] == 0.05 and rx[-1] == 0.995 and len(dx) == 1000
refined = np.max(np.abs(np.interp(dx, rx, ry) - dy) / dy)
uniform = np.max(np.abs(np.interp(dx, ux, uy) - dy) / dy)
print(f"ring N=6: {len(rx)} refined points err {refined:.4g}; uniform {len(ux)} points err {uniform:.4g}")
assert refined <= 0.005, refined
assert uniform > 0.005, uniform
PY
echo "PASS"
