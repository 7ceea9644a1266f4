#!/usr/bin/env bash
# The thresholds of refinements with a crossing (issue 33 item 3; docs/results-layout.md,
# "/thresholds") through `qsweep run`, against values found here independently:
# - mean-field power_of_d: E[T] = sum_k lambda^((d^k - d) / (d - 1)) in closed form, its root
#   found by bisection; the stored threshold is within the tolerance of it, its bracket holds it,
#   converged; with max_points too small the bracket holds it and the row says not converged;
#   a value the curve never reaches is a row with found = 0 and a warning, not left out;
# - an integer axis (N of the refined mean field): the bracket is the two neighbouring N whose
#   `qsweep eval` values straddle the crossing;
# - `qsweep export --group thresholds`, the Python loader, `status` (text and --json, against
#   docs/status.schema.json) and `verify` read the group; progress lines name the round;
# - killed (kill -9) in a later round, the file holds the thresholds of the rounds before, and
#   --resume ends with the file (thresholds included) of the uninterrupted run.
# Usage: run_thresholds.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"

# Block 3's crossing: halfway between the refined mean field's E[T] at N = 6 and N = 7.
et_n() {
  "$QSWEEP" eval --method meanfield --policy power_of_d --policy_d 2 --lambda 0.9 --order 1 \
    --N "$1" --json | "$PYTHON" -c 'import json, sys; print(repr(json.load(sys.stdin)["ET_N"]))'
}
et6=$(et_n 6)
et7=$(et_n 7)
crossing_n=$("$PYTHON" -c "print(repr(($et6 + $et7) / 2))")
sed "s/CROSSING_N/$crossing_n/" "$SOURCE_DIR/tests/integration/run_thresholds.yaml" >t.yaml

# --- the uninterrupted run, with progress lines -------------------------------------------------
mpi 2 "$QSWEEP" run t.yaml -o ref.h5 --progress 1 2>ref.log || { cat ref.log; fail "run"; }
grep -Eq '^qsweep: round [1-9][0-9]*: [0-9]+/[0-9]+ tasks' ref.log ||
  { cat ref.log; fail "no progress line names its round"; }
grep -q '^qsweep: thresholds: 4 found (3 converged), 1 curves without a crossing' ref.log ||
  { cat ref.log; fail "no summary of the thresholds"; }
grep -q "^qsweep: warning: refine (block 2.*no threshold: ET stays below 50 on lambda in \[0.1, 0.8\]" \
  ref.log || { cat ref.log; fail "no warning for the curve without a crossing"; }
grep -q "^qsweep: warning: refine (block 1.*not converged: .*max_points 6" ref.log ||
  { cat ref.log; fail "no warning for the threshold the budget left wide"; }
"$QSWEEP" verify ref.h5 >verify.txt || { cat verify.txt; fail "ref.h5 does not verify"; }

"$PYTHON" - ref.h5 "$et6" "$et7" "$crossing_n" <<'PY' || fail "the stored thresholds"
import sys, h5py, numpy as np
path, et6, et7, crossing_n = sys.argv[1], *map(float, sys.argv[2:])

def et(lam, d):  # the mean field's E[T] of power_of_d (docs/meanfield.md)
    return sum(lam ** ((d ** k - d) / (d - 1)) for k in range(1, 80))

def root(d, c, a, b):
    fa = et(a, d) - c
    for _ in range(200):
        m = a + (b - a) / 2
        if (et(m, d) - c < 0) == (fa < 0):
            a = m
        else:
            b = m
    return a

with h5py.File(path, "r") as f:
    g = f["thresholds"]
    assert "derived" in g.attrs, dict(g.attrs)
    t = {name: g[name][()] for name in g if not h5py.h5ds.is_scale(g[name].id)}
    for name in ("axis", "quantity", "state", "method", "note", "policy"):
        t[name] = np.array([v.decode() for v in t[name]])
    # Every threshold's ends are rows of the method group with those values.
    mf = f["meanfield"]
    ids, lam, N, ET, ETN = (mf[c][()] for c in ("task_id", "lambda", "N", "ET", "ET_N"))
    row_of = {int(i): r for r, i in enumerate(ids)}
assert len(t["block"]) == 5, t["block"]
rows = {(int(b), int(d)): r for r, (b, d) in enumerate(zip(t["block"], t["policy_d"]))}
assert np.isnan(t["lambda"][rows[(0, 2)]]), "the refined axis' own column is not applicable"
for d in (2, 3):  # block 0: converged, within the tolerance of the root
    r = rows[(0, d)]
    x = root(d, 3.0, 0.5, 0.99)
    assert t["found"][r] == 1 and t["converged"][r] == 1 and t["state"][r] == "converged", r
    assert t["bracket_lo"][r] <= x <= t["bracket_hi"][r], (t["bracket_lo"][r], x, t["bracket_hi"][r])
    assert t["bracket_hi"][r] - t["bracket_lo"][r] <= 1e-6
    assert abs(t["threshold"][r] - x) <= 1e-6, (t["threshold"][r], x)
    assert t["crossing"][r] == 3.0 and t["refine_tolerance"][r] == 1e-6 and t["axis"][r] == "lambda"
    for end, value in (("lo", "value_lo"), ("hi", "value_hi")):
        task = row_of[int(t["task_" + end][r])]
        assert lam[task] == t["bracket_" + end][r] and ET[task] == t[value][r]
    assert (t["value_lo"][r] - 3.0) * (t["value_hi"][r] - 3.0) < 0
    print(f"d={d}: E[T] = 3 at lambda {t['threshold'][r]:.9f} (root {x:.9f}), "
          f"bracket {t['bracket_hi'][r] - t['bracket_lo'][r]:.2g} wide, {t['points'][r]} points")
r = rows[(1, 2)]  # block 1: the budget left the bracket wide
x = root(2, 5.0, 0.6, 0.995)
assert t["found"][r] == 1 and t["converged"][r] == 0 and t["state"][r] == "budget", t["state"][r]
assert t["bracket_lo"][r] <= x <= t["bracket_hi"][r] and t["bracket_hi"][r] - t["bracket_lo"][r] > 1e-6
assert t["points"][r] == 6 and "max_points" in t["note"][r], t["note"][r]
print(f"budget: bracket [{t['bracket_lo'][r]:.6f}, {t['bracket_hi'][r]:.6f}] holds {x:.6f}, "
      "not converged")
r = rows[(2, 2)]  # block 2: no crossing, a row all the same
assert t["found"][r] == 0 and t["converged"][r] == 0 and t["state"][r] == "not_found"
assert np.isnan(t["threshold"][r]) and np.isnan(t["bracket_lo"][r]) and t["task_lo"][r] == -1
assert t["crossing"][r] == 50.0 and "stays below 50" in t["note"][r], t["note"][r]
r = rows[(3, 2)]  # block 3: integer axis, two neighbouring N
assert t["axis"][r] == "N" and t["N"][r] == -1, "N varies along the curve"
assert (t["bracket_lo"][r], t["bracket_hi"][r]) == (6, 7), (t["bracket_lo"][r], t["bracket_hi"][r])
assert t["converged"][r] == 1 and t["value_lo"][r] == et6 and t["value_hi"][r] == et7
assert 6 < t["threshold"][r] < 7 and t["crossing"][r] == crossing_n
print(f"integer axis: E[T_N] = {crossing_n:.6f} between N = 6 and 7 (threshold {t['threshold'][r]:.4f})")
PY

# --- export, the loader, status -----------------------------------------------------------------
"$QSWEEP" export ref.h5 --group thresholds --csv thresholds.csv
$CHECK csv ref.h5 thresholds thresholds.csv
mkdir all
"$QSWEEP" export ref.h5 --dir all
[ -s all/thresholds.csv ] && [ -s all/meanfield.csv ] && [ -s all/tasks.csv ] ||
  fail "export --dir leaves a group out: $(ls all)"
PYTHONPATH=$SOURCE_DIR/python "$PYTHON" - ref.h5 <<'PY' || fail "the Python loader"
import sys
import qsweep_results as q
t = q.load_thresholds(sys.argv[1])
assert t.rows == 5 and list(t["state"]).count("converged") == 3, t["state"]
assert q.group_names(sys.argv[1]) == ("meanfield",), q.group_names(sys.argv[1])
found = t.select(found=1, converged=1, policy_d=3)
assert found.rows == 1 and 0.5 < found["threshold"][0] < 0.99
PY
"$QSWEEP" status ref.h5 >status.txt
grep -q "^thresholds: 4 found (3 converged), 1 curves without a crossing" status.txt &&
  grep -q "^refine:   block 1: ET = 5 to 1e-06 on lambda: 6 tasks of 1 curves (budget 6" status.txt &&
  grep -Eq "^  block 3: ET_N = .* at N = 6\.[0-9]+ in \[6, 7\], converged" status.txt ||
  { cat status.txt; fail "status shows no refinement"; }
"$QSWEEP" status ref.h5 --json >status.json
"$PYTHON" - "$SOURCE_DIR/docs/status.schema.json" status.json <<'PY' || fail "status --json"
import json, sys, jsonschema
schema, status = (json.load(open(p)) for p in sys.argv[1:])
jsonschema.validate(status, schema)
r = status["refinement"]
assert r["rounds"] >= 10 and [b["block"] for b in r["blocks"]] == [0, 1, 2, 3], r
assert r["blocks"][1]["tasks"] == 6 and r["blocks"][1]["budget"] == 6, r["blocks"][1]
assert sum(r["blocks"][0]["tasks_per_round"]) == r["blocks"][0]["tasks"]
t = r["thresholds"]
assert (t["rows"], t["found"], t["converged"], t["not_found"]) == (5, 4, 3, 1), t
assert t["list"][0]["state"] == "converged" and len(t["list"][0]["bracket"]) == 2
assert [row["found"] for row in t["list"]].count(False) == 1
PY
# A file of a sweep without refine: has no thresholds: null, and the loader's table is empty.
cat >plain.yaml <<'YAML'
name: plain
blocks:
  - method: meanfield
    policy: jsq
    lambda: [0.5, 0.6]
YAML
"$QSWEEP" run plain.yaml -o plain.h5 --quiet
"$QSWEEP" status plain.h5 --json | "$PYTHON" -c '
import json, sys; assert json.load(sys.stdin)["refinement"] is None'
PYTHONPATH=$SOURCE_DIR/python "$PYTHON" -c '
import sys, qsweep_results as q; assert q.load_thresholds(sys.argv[1]).rows == 0' plain.h5
expect_exit 2 "$QSWEEP" export plain.h5 --group thresholds

# --- kill -9 in a later round, then resume ------------------------------------------------------
held=$("$PYTHON" -c 'import sys, h5py, numpy as np
r = h5py.File(sys.argv[1], "r")["tasks/round"][()]
print(np.flatnonzero(r == 3)[0])' ref.h5)
hold_tasks hold "$held"
start_job -n 2 --oversubscribe "$QSWEEP" run t.yaml -o killed.h5 --quiet 2>killed.log
wait_started "$JOB_PID"
[ "$STARTED_TASK" = "$held" ] || fail "held task $held, $STARTED_TASK started"
kill_job
no_hold
$CHECK snapshot killed.h5 snapshot.npz
"$QSWEEP" verify killed.h5 >/dev/null || fail "the killed file does not verify"
# Its thresholds are those of the rows of rounds 0 to 2, which the next round was refining.
"$PYTHON" - killed.h5 <<'PY' || fail "the killed file's thresholds"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    g, mf, tasks = f["thresholds"], f["meanfield"], f["tasks"]
    rnd, status = tasks["round"][()], tasks["status"][()]
    assert rnd.max() == 3, rnd
    ids, lam, d, ET = (mf[c][()] for c in ("task_id", "lambda", "policy_d", "ET"))
    state = [s.decode() for s in g["state"][()]]
    blocks, pd = g["block"][()], g["policy_d"][()]
    r = int(np.flatnonzero((blocks == 0) & (pd == 2))[0])
    assert state[r] == "refining", state
    # The bracket of E[T] = 3 among the d = 2 points of block 0 of rounds 0 to 2.
    block = tasks["block"][()]
    keep = (block[ids] == 0) & (d == 2) & (rnd[ids] < 3) & (status[ids] == 1)
    x, y = lam[keep], ET[keep]
    o = np.argsort(x)
    x, y = x[o], y[o]
    i = int(np.flatnonzero((y[:-1] < 3) & (y[1:] > 3))[0])
    assert (g["bracket_lo"][r], g["bracket_hi"][r]) == (x[i], x[i + 1]), (g["bracket_lo"][r], x[i], x[i + 1])
    assert g["round"][r] == 2 and g["points"][r] == keep.sum()
PY
"$QSWEEP" status killed.h5 >killed-status.txt || true
grep -q "refining" killed-status.txt || { cat killed-status.txt; fail "status of the killed file"; }
mpi 2 "$QSWEEP" run t.yaml -o killed.h5 --resume --quiet 2>resumed.log ||
  { cat resumed.log; fail "resume"; }
$CHECK resumed killed.h5 ref.h5 snapshot.npz --min-kills-in-flight 1
"$QSWEEP" verify killed.h5 >/dev/null || fail "the resumed file does not verify"
echo "killed in round 3 (task $held in flight) and resumed: the thresholds of the uninterrupted run"
echo "PASS"
