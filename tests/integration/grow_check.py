#!/usr/bin/python3
"""Checks of grown and merged results files for tests/integration/run_grow.sh and run_merge.sh
(Debian's h5py and numpy).

  grow_check.py kept OLD.h5 NEW.h5
      Every finished task of OLD is in NEW, matched by task content (the method, the seed and the
      parameter columns listed in KEYS), with the same status, results, wall_seconds, rank and
      attempts: it did not run again. Every task of NEW not in OLD is done with attempts = 1.
Exits non-zero with a message on the first difference.
"""
import sys

import h5py
import numpy as np

# The parameter columns that tell the tasks of the test sweeps apart, per method group.
KEYS = {"exact": ["family", "N", "lambda", "qmax"],
        "meanfield": ["policy", "policy_d", "lambda"],
        "simulate": ["family", "N", "lambda"]}
PER_RUN = {"events_per_second", "cpu_seconds", "task_id"}  # and task_id: its place, not content
FINISHED = (1, 3)  # done, unstable


def fail(message):
    print("grow_check: " + message, file=sys.stderr)
    sys.exit(1)


def rows(path):
    """content key -> {name: the row's bytes} for every task of the file."""
    out = {}
    with h5py.File(path, "r") as f:
        t = f["tasks"]
        tasks = {name: t[name][()] for name in ("status", "wall_seconds", "rank", "attempts", "seed",
                                                "method", "error", "warning")}
        for group_name, key_columns in KEYS.items():
            if group_name not in f:
                continue
            g = f[group_name]
            names = [n for n in g if not h5py.h5ds.is_scale(g[n].id)]
            data = {n: g[n][()] for n in names}
            for r, task in enumerate(data["task_id"]):
                key = (group_name, int(tasks["seed"][task])) + tuple(
                    data[c][r].item() for c in key_columns)
                if key in out:
                    fail(f"{path}: two tasks with the key {key}")
                row = {"/tasks/" + n: np.asarray(v[task]).tobytes() for n, v in tasks.items()}
                for n in names:
                    if n in PER_RUN or n.endswith("_offset"):
                        continue
                    if n + "_offset" in data:  # ragged: the row's values
                        o, c = data[n + "_offset"][r], data[n + "_count"][r]
                        row[n] = data[n][o:o + c].tobytes()
                    elif n.endswith("_count") and n[:-6] + "_offset" in data:
                        continue
                    elif data[n].ndim == 2:  # a distribution: its values without NaN padding
                        v = data[n][r]
                        last = np.flatnonzero(~np.isnan(v))
                        row[n] = v[:last[-1] + 1 if len(last) else 0].tobytes()
                    else:
                        row[n] = np.asarray(data[n][r]).tobytes()
                out[key] = row
    return out


def kept(old_path, new_path):
    old, new = rows(old_path), rows(new_path)
    finished = 0
    for key, row in old.items():
        if key not in new:
            fail(f"task {key} of {old_path} is not in {new_path}")
        status = np.frombuffer(row["/tasks/status"], np.int8)[0]
        if status not in FINISHED:
            continue
        finished += 1
        differs = [n for n in row if row[n] != new[key].get(n)]
        if differs:
            fail(f"task {key}: {differs} differ between {old_path} and {new_path}")
    added = [key for key in new if key not in old]
    for key in added:
        row = new[key]
        if np.frombuffer(row["/tasks/attempts"], np.int32)[0] != 1 or \
                np.frombuffer(row["/tasks/status"], np.int8)[0] != 1:
            fail(f"new task {key} of {new_path} is not done with attempts 1")
    print(f"grow_check: {finished} finished tasks of {old_path} kept whole in {new_path}, "
          f"{len(added)} new tasks done once")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "kept":
        kept(sys.argv[2], sys.argv[3])
    else:
        fail(__doc__)
