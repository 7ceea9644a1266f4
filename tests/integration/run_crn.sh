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

assert all(p["window"] == (100.0, 2100.0) for p in pairs.values()), pairs  # the own windows

# A file made before the totals for a common window were stored, whose pair stopped at different
# rounds (made by removing the totals and tripling one row's events, as a further round would):
# still paired over each row's own window, but said to have unequal windows, with a warning.
shutil.copy(sys.argv[2], "rounds.h5")
with h5py.File("rounds.h5", "r+") as f:
    row = int(np.flatnonzero(f["simulate/task_id"][()] == gain["task_id_b"])[0])
    f["simulate/events"][row] = 3 * f["simulate/events"][row]
    for name in ("cumulative_time", "cumulative_replications"):
        for suffix in ("", "_offset", "_count"):
            del f[f"simulate/{name}{suffix}"]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    later = [p for p in paired_difference("rounds.h5", "policy", "random", "power_of_d")
             if p["task_id_b"] == gain["task_id_b"]]
assert len(later) == 1 and not later[0]["equal_windows"] and later[0]["window"] is None, later
assert later[0]["difference"] == gain["difference"], later
assert any("windows differ" in str(w.message) for w in caught), [str(w.message) for w in caught]
PY

# The default procedure: with this horizon d = 2 stops a round later than d = 3 (19 200 time
# units against 9 600 after the warm-up, from a first horizon of 150), so their own windows differ
# and pair weakly; paired_difference compares them over the window both observed, recomputed from
# the totals on the grid of window bounds. Checked against a recomputation from the raw datasets.
cat >rounds.yaml <<'YAML'
name: crn-rounds
seed: 3
blocks:
  - method: simulate
    family: complete
    N: 10
    d: 10
    lambda: 0.8
    policy: power_of_d
    policy_d: [2, 3]
    common_random_numbers: [policy_d]
    horizon: 150
    warmup: 50
    replications: 16
    max_events: 5e7
YAML
mpi 2 "$QSWEEP" run rounds.yaml -o default.h5 --quiet
"$PYTHON" - "$SOURCE_DIR" default.h5 <<'PY'
import sys
import warnings
sys.path.insert(0, sys.argv[1] + "/python")
import h5py
import numpy as np
from scipy import stats
from qsweep_results import paired_difference

rows = {}
with h5py.File(sys.argv[2], "r") as f:
    g = f["simulate"]
    def ragged(name, row):
        o, c = g[name + "_offset"][row], g[name + "_count"][row]
        return g[name][o:o + c]
    for row, d in enumerate(g["policy_d"][()]):
        times = ragged("cumulative_time", row)
        rows[int(d)] = {"task_id": int(g["task_id"][row]), "times": times,
                        "totals": ragged("cumulative_replications", row).reshape(16, len(times), 3),
                        "start": g["warmup_used"][row] - g["warmup"][row],
                        "ET": g["ET_replications"][row], "EQ": g["EQ_replications"][row]}
two, three = rows[2], rows[3]
# Different rounds: d = 2's last round twice as long (both keep their whole runs: no truncation).
assert two["times"][-1] == 2 * three["times"][-1], (two["times"], three["times"])
assert two["start"] == three["start"] == 0.0, (two["start"], three["start"])

def over(r, start, end, estimate):
    def at(time):
        return np.zeros((16, 3)) if time == 0 else r["totals"][:, list(r["times"]).index(time), :]
    d = at(end) - at(start)
    return d[:, 0] / (end - start) if estimate == "EQ" else d[:, 1] / d[:, 2]

end = three["times"][-1]
for estimate in ("ET", "EQ"):
    # The raw totals give each row's own estimates over its own window.
    for r in (two, three):
        own = over(r, 0.0, r["times"][-1], estimate)
        assert np.allclose(own, r[estimate], rtol=1e-12, atol=0), (estimate, own, r[estimate])
    x, y = over(two, 0.0, end, estimate), over(three, 0.0, end, estimate)
    d = x - y
    t = stats.t.ppf(0.975, 15)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a common window: no warning
        (p,) = paired_difference(sys.argv[2], "policy_d", 2, 3, estimate=estimate)
    assert p["window"] == (50.0, 50.0 + end) and not p["equal_windows"] and p["common"], p
    assert np.isclose(p["difference"], d.mean(), rtol=1e-12, atol=0), (p, d.mean())
    assert np.isclose(p["half_width"], t * d.std(ddof=1) / 4, rtol=1e-12, atol=0), p
    correlation = np.corrcoef(x, y)[0, 1]
    assert np.isclose(p["correlation"], correlation, rtol=1e-12, atol=0), p
    # The unpaired half-width stays that of the rows' own estimates.
    own_x, own_y = two[estimate], three[estimate]
    assert np.isclose(p["unpaired_half_width"],
                      t * np.sqrt((own_x.var(ddof=1) + own_y.var(ddof=1)) / 16), rtol=1e-12, atol=0)
    # The common window pairs far better than the rows' own windows.
    own = np.corrcoef(own_x, own_y)[0, 1]
    own_hw = t * (own_x - own_y).std(ddof=1) / 4
    assert p["correlation"] > 0.95 and own < 0.8, (estimate, p["correlation"], own)
    assert p["half_width"] < 0.7 * own_hw, (estimate, p["half_width"], own_hw)
    print(f"{estimate}: common window {p['window']}: correlation {p['correlation']:.3f} "
          f"(own windows {own:.3f}), difference {p['difference']:.5f} +- {p['half_width']:.5f} "
          f"(own windows +- {own_hw:.5f})")
PY
echo "PASS: common random numbers share sample paths and pair per replication"
