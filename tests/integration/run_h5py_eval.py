#!/usr/bin/python3
"""Loads /exact of a results file into numpy arrays with h5py and checks that `qsweep eval` prints
the same values for the same parameters (scalars, the distribution row, the ragged per-server
values). Usage: run_h5py_eval.py QSWEEP RESULTS.h5"""
import json
import subprocess
import sys

import h5py
import numpy as np

qsweep, path = sys.argv[1], sys.argv[2]
with h5py.File(path, "r") as f:
    group = f["exact"]
    # One numpy array per column: the 1-D ones as a table, the others as they are.
    exact = {name: group[name][()] for name in group}
    status = f["tasks/status"][()]
    done = h5py.check_enum_dtype(f["tasks/status"].dtype)["done"]

rows = len(exact["task_id"])
assert all(exact[name].shape[0] == rows for name in exact
           if exact[name].ndim == 2 or name.endswith(("_offset", "_count"))), "ragged shapes"
checked = 0
for row in range(rows):
    if status[exact["task_id"][row]] != done:
        continue
    family = exact["family"][row].decode()
    args = [qsweep, "eval", "--json", "--family", family, "--N", str(exact["N"][row]),
            "--lambda", repr(float(exact["lambda"][row])), "--qmax", str(exact["qmax"][row])]
    if not np.isnan(exact["eps"][row]):
        args += ["--eps", repr(float(exact["eps"][row]))]
    if exact["d"][row] >= 0:
        args += ["--d", str(exact["d"][row])]
    printed = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    for key in ("C", "EQ", "VarQ", "ET", "scaled_EQ"):
        assert exact[key][row] == printed[key], (row, key, exact[key][row], printed[key])
    qmax = exact["qmax"][row]
    assert np.array_equal(exact["pmf"][row, :qmax + 1], np.array(printed["pmf"])), (row, "pmf")
    assert np.isnan(exact["pmf"][row, qmax + 1:]).all(), (row, "pmf padding")
    start, count = exact["ER_server_offset"][row], exact["ER_server_count"][row]
    assert np.array_equal(exact["ER_server"][start:start + count], np.array(printed["ER_server"])), \
        (row, "ER_server")
    checked += 1
assert checked >= 10, f"only {checked} rows checked"
print(f"run_h5py_eval: {checked} rows of /exact equal what qsweep eval prints")
