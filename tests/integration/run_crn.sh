#!/usr/bin/env bash
# Common random numbers (docs/sim.md): tasks that differ only in keys listed in
# common_random_numbers share their arrivals and services, and the Python loader's
# paired_difference pairs their per-replication estimates. Checked against what must hold:
# random routing and power_of_d with d = 1 are the same policy in law and, with shared streams,
# on every sample path (the paired difference is exactly 0 in every replication); random routing's
# E[T] is the M/M/1 value 1 / (1 - lambda) within its interval; power_of_d with d = 2 gains
# over random, and the pairing makes that difference more precise than independent runs would.
# Usage: run_crn.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"
cat >crn.yaml <<'YAML'
name: crn
seed: 7
blocks:
  - method: simulate
    family: complete
    N: 10
    d: 10
    lambda: 0.7
    policy: [random, power_of_d]
    policy_d: [1, 2]
    common_random_numbers: [policy, policy_d]
    horizon: 2000
    warmup: 100
    replications: 16
    max_events: 1
YAML
mpi 2 "$QSWEEP" run crn.yaml -o crn.h5 --quiet
"$PYTHON" - "$SOURCE_DIR" crn.h5 <<'PY'
import shutil
import sys
import warnings
sys.path.insert(0, sys.argv[1] + "/python")
import h5py
import numpy as np
from qsweep_results import load_group, paired_difference

simulate = load_group(sys.argv[2], "simulate")
assert simulate.rows == 3, simulate.rows  # random (policy_d does not apply), power_of_d d = 1, 2
assert set(simulate["common_random_numbers"]) == {"policy,policy_d"}
assert all(len(x) == 16 for x in simulate["ET_replications"])
random = simulate.select(policy="random")
lam = 0.7
assert abs(random["ET"][0] - 1 / (1 - lam)) <= 2 * random["ET_hw"][0], random["ET"]
pairs = {}
with warnings.catch_warnings():
    warnings.simplefilter("error")  # one round each (max_events 1): equal windows, no warning
    for p in paired_difference(sys.argv[2], "policy", "random", "power_of_d"):
        pairs[int(simulate["policy_d"][simulate["task_id"] == p["task_id_b"]][0])] = p
assert set(pairs) == {1, 2}, pairs
assert all(p["equal_windows"] for p in pairs.values()), pairs
same = pairs[1]
assert same["common"] and same["difference"] == 0.0 and same["half_width"] == 0.0, same
gain = pairs[2]
assert gain["difference"] - gain["half_width"] > 0, gain  # d = 2 is faster than random routing
assert gain["common"] and gain["half_width"] < 0.8 * gain["unpaired_half_width"], gain
print("paired:", gain)

# A pair that stopped at different rounds (made by doubling one row's events, as a further round
# would): still paired, but said to have unequal windows, with a warning.
shutil.copy(sys.argv[2], "rounds.h5")
with h5py.File("rounds.h5", "r+") as f:
    row = int(np.flatnonzero(f["simulate/task_id"][()] == gain["task_id_b"])[0])
    f["simulate/events"][row] = 3 * f["simulate/events"][row]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    later = [p for p in paired_difference("rounds.h5", "policy", "random", "power_of_d")
             if p["task_id_b"] == gain["task_id_b"]]
assert len(later) == 1 and not later[0]["equal_windows"], later
assert later[0]["difference"] == gain["difference"], later
assert any("windows differ" in str(w.message) for w in caught), [str(w.message) for w in caught]
PY
echo "PASS: common random numbers share sample paths and pair per replication"
