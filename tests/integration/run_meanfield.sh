#!/usr/bin/env bash
# Method meanfield end to end: `qsweep eval` (text and --json) prints the JSQ(2) and the
# redundancy-2 fixed points, and a sweep of meanfield blocks (no seed: the method is
# deterministic) runs through `mpirun -n 2 qsweep run` into the HDF5 file, where h5py finds the
# closed forms.
# Usage: run_meanfield.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"

"$QSWEEP" eval --method meanfield --policy power_of_d --policy_d 2 --lambda 0.9 >eval.txt ||
  fail "qsweep eval --method meanfield failed: $(cat eval.txt)"
grep -q '^status  *done' eval.txt || fail "eval did not finish: $(cat eval.txt)"
grep -q '^ET  *2.61405' eval.txt || fail "eval ET is not 2.61405...: $(cat eval.txt)"
"$QSWEEP" eval --method meanfield --policy power_of_d --policy_d 2 --lambda 0.9 --json >eval.json ||
  fail "qsweep eval --json failed"
"$PYTHON" - eval.json <<'PY' || fail "eval --json does not give the JSQ(2) fixed point"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "done", r
x = r["occupancy"]
assert len(x) == 8, x
for i, v in enumerate(x, 1):
    assert abs(v - 0.9 ** (2 ** i - 1)) <= 1e-12, (i, v)
assert abs(r["EQ_per_server"] - sum(0.9 ** (2 ** i - 1) for i in range(1, 12))) < 1e-12, r
assert r["ER_per_server"] == r["EQ_per_server"] and "EQ" not in r  # a job is one replica
assert abs(r["ET"] - r["EQ_per_server"] / 0.9) < 1e-12
PY
expect_exit 2 "$QSWEEP" eval --method meanfield --policy jsq --lambda 1.0

# Redundancy-2 with cancel-on-completion: E[T] = -ln(1 - lambda) / lambda^2 - 1 / lambda, and the
# occupancy counts replicas: x_1 = lambda, sum_i x_i = ER_per_server = d lambda E[T], d times the
# jobs per server EQ_per_server.
"$QSWEEP" eval --method meanfield --policy redundancy_coc --policy_d 2 --lambda 0.9 >coc.txt ||
  fail "qsweep eval --policy redundancy_coc failed: $(cat coc.txt)"
grep -q '^ET  *1.73158' coc.txt || fail "redundancy_coc ET is not 1.73158...: $(cat coc.txt)"
"$QSWEEP" eval --method meanfield --policy redundancy_coc --policy_d 2 --lambda 0.9 --json \
  >coc.json || fail "qsweep eval --policy redundancy_coc --json failed"
"$PYTHON" - coc.json <<'PY' || fail "eval --json does not give the redundancy-2 fixed point"
import json, math, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "done" and r["policy_d"] == 2, r
et = -math.log(1 - 0.9) / 0.81 - 1 / 0.9
assert abs(r["ET"] - et) < 1e-10 * et, r["ET"]
assert abs(r["ER_per_server"] - 2 * 0.9 * r["ET"]) < 1e-12, r["ER_per_server"]
assert r["EQ_per_server"] == r["ER_per_server"] / 2, r
x = r["occupancy"]
assert abs(x[0] - 0.9) < 1e-13 and all(a > b for a, b in zip(x, x[1:])), x
assert abs(sum(x) - r["ER_per_server"]) < 1e-12 * r["ER_per_server"], (sum(x), r)
PY
expect_exit 2 "$QSWEEP" eval --method meanfield --policy redundancy_coc --lambda 0.9 --horizon 5

cat >meanfield.yaml <<'YAML'
name: meanfield-it
blocks:
  - method: meanfield
    policy: power_of_d
    policy_d: [1, 2, 3]
    lambda: [0.5, 0.9]
  - method: meanfield
    policy: [jsq, jiq]
    lambda: 0.8
    horizon: 30
    time_points: 4
    initial_counts: [2, 0, 0, 2]
  - method: meanfield
    policy: redundancy_coc
    policy_d: [1, 2, 3]
    lambda: 0.9
YAML
mpi 2 "$QSWEEP" run meanfield.yaml -o meanfield.h5 --quiet
"$PYTHON" - meanfield.h5 <<'PY' || fail "the results file does not hold the meanfield rows"
import sys
import h5py
import numpy as np
with h5py.File(sys.argv[1], "r") as f:
    g = f["meanfield"]
    policy = [p.decode() if isinstance(p, bytes) else p for p in g["policy"][()]]
    assert len(policy) == 11, policy
    offsets, counts = g["occupancy_offset"][()], g["occupancy_count"][()]
    flat = g["occupancy"][()]
    for row in range(11):
        lam, d = g["lambda"][row], g["policy_d"][row]
        x = flat[offsets[row]:offsets[row] + counts[row]]
        assert counts[row] == g["levels"][row] and counts[row] >= 1, row
        if policy[row] == "power_of_d":
            i = np.arange(1, counts[row] + 1)
            expected = lam ** i if d == 1 else lam ** ((d ** i - 1.0) / (d - 1.0))
            assert np.allclose(x, expected, rtol=1e-12, atol=0), (row, x)
            assert abs(g["ET"][row] - g["EQ_per_server"][row] / lam) < 1e-12
        elif policy[row] == "redundancy_coc":  # E[T] = sum_n lambda^(n-1) / ((d-1) n + 1)
            et = sum(lam ** (n - 1) / ((d - 1) * n + 1) for n in range(1, 2000))
            assert abs(g["ET"][row] - et) < 1e-10 * et, (row, d, g["ET"][row], et)
            er = g["ER_per_server"][row]
            assert abs(er - d * lam * g["ET"][row]) < 1e-12 * er, row
            assert g["EQ_per_server"][row] == er / d, row
            assert abs(x[0] - lam) < 1e-13 and abs(x.sum() - er) < 1e-12 * er
            if d == 1:
                assert np.allclose(x, lam ** np.arange(1, counts[row] + 1), rtol=1e-12), x
        else:
            assert abs(x[0] - lam) < 1e-15 and g["EQ_per_server"][row] == lam and g["ET"][row] == 1.0
            t0 = g["trajectory_offset"][row]
            assert g["trajectory_count"][row] == 4 * counts[row] == 12, row
            traj = g["trajectory"][t0:t0 + 12].reshape(4, 3)
            assert np.allclose(traj[0], [0.5, 0.5, 0.5]), traj  # half the queues at length 3
            assert abs(traj[3][0] - lam) < 1e-6 and traj[3][1] < 1e-6, traj
print("meanfield rows ok")
PY
echo "PASS: meanfield through eval and mpirun -n 2 qsweep run"
