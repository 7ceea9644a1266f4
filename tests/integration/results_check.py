#!/usr/bin/python3
"""Checks on qsweep results files for the integration tests (Debian's h5py and numpy).

  results_check.py same A.h5 B.h5 [--ignore-attempts] [--other-sweep-text]
      The result datasets of A and B are identical (timing and rank columns aside), and so are
      their plan hashes and stored sweep files (with --other-sweep-text, the plan hashes only:
      a merged file stores a joined sweep that expands to the same plan).
  results_check.py close A.h5 B.h5 --rtol R
      A and B hold the same plan (plan hash) and every result dataset of A equals B's (timing,
      rank and checksum columns aside): integers exactly, floats within R relative (NaN where
      the other is NaN; an exact zero only against a value within R of it).
  results_check.py snapshot FILE.h5 OUT.npz
      Saves status and attempts of every task (taken after a kill).
  results_check.py resumed FINAL.h5 REFERENCE.h5 SNAPSHOT.npz... [--min-kills-in-flight K]
      FINAL (killed and resumed) equals REFERENCE (one uninterrupted run), and only the tasks in
      flight at each kill ran again: a task's attempts = 1 + the kills that caught it in flight,
      tasks finished before a kill never ran again; at least K kills caught tasks in flight.
  results_check.py opens FILE.h5
      The file opens and every dataset reads.
  results_check.py csv FILE.h5 GROUP EXPORT.csv
      EXPORT.csv (from `qsweep export`) holds the group's one-value-per-row datasets in creation
      order (ragged columns and distributions left out, status and warning columns after task_id in
      method groups), one line per row, every value equal to the dataset's (floats read back exactly,
      NaN as an empty field).
Exits non-zero with a message on the first difference.
"""
import csv
import math
import sys

import h5py
import numpy as np

# Columns that legitimately differ between runs of the same plan.
# Timing and placement differ between runs, and where a row was copied from (run --reuse); the row
# checksum covers them, so it differs too.
TIMING = {"/tasks/wall_seconds", "/tasks/rank", "/tasks/checksum", "/tasks/reused_from",
          "/simulate/events_per_second", "/ldp/cpu_seconds"}
DONE = 1


def fail(message):
    print("results_check: " + message, file=sys.stderr)
    sys.exit(1)


def datasets(f):
    found = {}
    f.visititems(lambda name, obj: found.__setitem__("/" + name, obj) if isinstance(obj, h5py.Dataset) else None)
    return found


def same_values(a, b):
    if a.dtype.kind == "f":
        return np.array_equal(a, b, equal_nan=True)
    return np.array_equal(a, b)


def same(path_a, path_b, ignore_attempts=False, other_sweep_text=False):
    with h5py.File(path_a, "r") as fa, h5py.File(path_b, "r") as fb:
        keys = ("plan_hash", "format_version") + (() if other_sweep_text else ("sweep_sha256",))
        for key in keys:
            if fa.attrs[key] != fb.attrs[key]:
                fail(f"attribute {key} differs: {fa.attrs[key]} vs {fb.attrs[key]}")
        da, db = datasets(fa), datasets(fb)
        if set(da) != set(db):
            fail(f"different datasets: {sorted(set(da) ^ set(db))}")
        skip = set(TIMING) | ({"/tasks/attempts"} if ignore_attempts else set())
        compared = 0
        for name in sorted(da):
            if name in skip:
                continue
            a, b = da[name][()], db[name][()]
            if a.dtype != b.dtype or a.shape != b.shape:
                fail(f"{name}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}")
            if not same_values(a, b):
                where = np.argwhere(~((a == b) | ((a != a) & (b != b))) if a.dtype.kind == "f" else a != b)
                fail(f"{name} differs at {where[:5].tolist()}: {a[tuple(where[0])]} vs {b[tuple(where[0])]}")
            compared += 1
        print(f"results_check: {path_a} and {path_b}: {compared} datasets identical")


def close(path_a, path_b, rtol):
    with h5py.File(path_a, "r") as fa, h5py.File(path_b, "r") as fb:
        if fa.attrs["plan_hash"] != fb.attrs["plan_hash"]:
            fail(f"plan hashes differ: {fa.attrs['plan_hash']} vs {fb.attrs['plan_hash']}")
        da, db = datasets(fa), datasets(fb)
        if set(da) != set(db):
            fail(f"different datasets: {sorted(set(da) ^ set(db))}")
        compared, worst = 0, 0.0
        for name in sorted(set(da) - TIMING):
            a, b = da[name][()], db[name][()]
            if a.dtype != b.dtype or a.shape != b.shape:
                fail(f"{name}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}")
            if a.dtype.kind == "f":
                nan = np.isnan(a) | np.isnan(b)
                if not np.array_equal(np.isnan(a), np.isnan(b)):
                    fail(f"{name}: NaN in one file only at {np.argwhere(np.isnan(a) != np.isnan(b))[:5].tolist()}")
                scale = np.maximum(np.abs(a), np.abs(b))
                error = np.where(nan, 0.0, np.abs(a - b) / np.where(scale > 0, scale, 1.0))
                if error.size and error.max() > rtol:
                    where = np.unravel_index(np.argmax(error), error.shape)
                    fail(f"{name} differs by {error.max():.3g} relative at {list(where)}: {a[where]} vs {b[where]}")
                worst = max(worst, float(error.max()) if error.size else 0.0)
            elif not same_values(a, b):
                fail(f"{name} differs")
            compared += 1
        print(f"results_check: {path_a} and {path_b}: {compared} datasets equal, floats within "
              f"{worst:.3g} relative (at most {rtol})")


def snapshot(path, out):
    with h5py.File(path, "r") as f:
        np.savez(out, status=f["tasks/status"][()].astype(np.int8), attempts=f["tasks/attempts"][()])


def resumed(final, reference, snapshots, min_kills_in_flight=0):
    same(final, reference, ignore_attempts=True)
    with h5py.File(final, "r") as f:
        status = f["tasks/status"][()]
        attempts = f["tasks/attempts"][()].astype(np.int64)
    if not (status == DONE).all():
        fail(f"{final}: {(status != DONE).sum()} tasks not done")
    expected = np.ones_like(attempts)
    previous = np.zeros_like(attempts)
    kills_in_flight = 0
    for path in snapshots:
        snap = np.load(path)
        s, a = snap["status"], snap["attempts"].astype(np.int64)
        # Tasks a later refinement round appended were pending, never handed out, at the kill.
        s = np.pad(s, (0, len(attempts) - len(s)))
        a = np.pad(a, (0, len(attempts) - len(a)))
        # In flight at this kill: handed out since the previous kill and not finished.
        in_flight = (s != DONE) & (a > previous)
        expected += in_flight
        kills_in_flight += bool(in_flight.any())
        done = s == DONE
        # A task finished before a kill keeps the attempts it had: it never ran again.
        if (attempts[done] != a[done]).any():
            ids = np.flatnonzero(done & (attempts != a))[:5]
            fail(f"tasks finished before a kill ran again: {ids.tolist()}")
        print(f"results_check: {path}: {done.sum()} done, {in_flight.sum()} in flight at the kill")
        previous = a
    if (attempts != expected).any():
        ids = np.flatnonzero(attempts != expected)[:5]
        fail(f"attempts {attempts[ids].tolist()} of tasks {ids.tolist()}, expected {expected[ids].tolist()}")
    print(f"results_check: attempts match the kills ({int((expected - 1).sum())} tasks ran again)")
    if kills_in_flight < min_kills_in_flight:
        fail(f"only {kills_in_flight} kills caught tasks in flight, expected {min_kills_in_flight}")


def opens(path):
    with h5py.File(path, "r") as f:
        for name, dataset in datasets(f).items():
            dataset[()]
        print(f"results_check: {path} opens, {len(datasets(f))} datasets read")


def exported_columns(group):
    """Names of the 1-D datasets of a group that are one value per row, in creation order
    (named dimensions, which hold no values, are not columns)."""
    names = [n for n in group.keys() if not h5py.h5ds.is_scale(group[n].id)]
    ragged = {n for n in names if n + "_offset" in names}
    ragged |= {n + suffix for n in ragged for suffix in ("_offset", "_count")}
    return [n for n in names if n not in ragged and group[n].ndim == 1]


def csv_matches(path, group_name, csv_path):
    with h5py.File(path, "r") as f:
        group = f[group_name]
        status_names = {v: k for k, v in h5py.check_enum_dtype(f["tasks/status"].dtype).items()}
        task_status = f["tasks/status"][()]
        columns = {}
        for name in exported_columns(group):
            values = group[name][()]
            if name == "status":
                values = [status_names[v] for v in values]
            columns[name] = values
            if name == "task_id" and group_name != "tasks":
                columns["status"] = [status_names[task_status[i]] for i in values]
                if "warning" in f["tasks"]:
                    columns["warning"] = f["tasks/warning"][()][values]
    with open(csv_path, newline="") as text:
        reader = csv.reader(text)
        header = next(reader)
        if header != list(columns):
            fail(f"{csv_path}: columns {header}, expected {list(columns)}")
        rows = 0
        for r, row in enumerate(reader):
            rows += 1
            for name, field in zip(header, row):
                value = columns[name][r]
                if isinstance(value, bytes):
                    ok = field == value.decode()
                elif isinstance(value, str):
                    ok = field == value
                elif isinstance(value, (float, np.floating)):
                    ok = field == "" if math.isnan(value) else float(field) == value
                else:
                    ok = int(field) == value
                if not ok:
                    fail(f"{csv_path}: row {r} column {name}: '{field}', dataset has {value!r}")
    expected_rows = len(next(iter(columns.values())))
    if rows != expected_rows:
        fail(f"{csv_path}: {rows} rows, /{group_name} has {expected_rows}")
    print(f"{csv_path}: {rows} rows x {len(columns)} columns equal to /{group_name}")


def main(argv):
    if len(argv) >= 3 and argv[0] == "same":
        same(argv[1], argv[2], "--ignore-attempts" in argv[3:], "--other-sweep-text" in argv[3:])
    elif len(argv) == 5 and argv[0] == "close" and argv[3] == "--rtol":
        close(argv[1], argv[2], float(argv[4]))
    elif len(argv) == 3 and argv[0] == "snapshot":
        snapshot(argv[1], argv[2])
    elif len(argv) >= 3 and argv[0] == "resumed":
        rest, minimum = argv[3:], 0
        if "--min-kills-in-flight" in rest:
            i = rest.index("--min-kills-in-flight")
            minimum = int(rest[i + 1])
            rest = rest[:i] + rest[i + 2:]
        resumed(argv[1], argv[2], rest, minimum)
    elif len(argv) == 2 and argv[0] == "opens":
        opens(argv[1])
    elif len(argv) == 4 and argv[0] == "csv":
        csv_matches(argv[1], argv[2], argv[3])
    else:
        fail(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
