#!/usr/bin/env bash
# Results files made before tasks had keys (format version 2; docs/results-layout.md, "Older
# files"): the fixtures in tests/integration/fixtures were made by qsweep 0cec410 (`mpirun -n 2
# qsweep run SWEEP -o FILE`, the sweeps stored in them): format2-exact.h5 (exact and meanfield
# tasks), format2-random.h5 (exact and simulate tasks) and format2-duplicates.h5 (a task listed in
# two blocks: two rows). All still show in status and export;
# the tasks of both give other numbers since (simulate: numbers version 3; exact on complete and
# meanfield power_of_d: version 2), so verify refuses them in one line. --resume and merge are
# refused with what to do, the file untouched.
# format3-simulate.h5 (qsweep c61af98, format version 3), format4-mixed.h5 (qsweep 2cb16e8,
# format version 4) and format5-mixed.h5 (qsweep 3959532, format version 5): see their sections
# below.
# Usage: run_old_format.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"
FIXTURES=$SOURCE_DIR/tests/integration/fixtures
cp "$FIXTURES/format2-exact.h5" "$FIXTURES/format2-random.h5" .

for file in format2-exact.h5 format2-random.h5; do
  "$QSWEEP" status "$file" >status.txt || fail "status $file: $(cat status.txt)"
  grep -q "(qsweep-results v2)" status.txt || fail "status $file: $(cat status.txt)"
  # Both are at earlier numbers versions: format2-random's simulate tasks (docs/sim.md, "Output
  # analysis"), format2-exact's exact tasks on complete (the symmetric engine, docs/exact.md) and
  # its meanfield power_of_d task (docs/meanfield.md, "Numbers version"): the stored sweep expands
  # to another plan hash now, and verify says so in one line.
  expect_exit 2 "$QSWEEP" verify "$file" 2>verify.txt
  grep -q "made by a qsweep version whose methods give other numbers" verify.txt ||
    fail "verify $file: $(cat verify.txt)"
  mkdir -p "csv-$file"
  "$QSWEEP" export "$file" --dir "csv-$file/" >/dev/null || fail "export $file"
  [ -s "csv-$file/exact.csv" ] || fail "export $file wrote no exact.csv"
  "$QSWEEP" status "$file" --yaml >"${file%.h5}.yaml"
done

# Simulate rows of streams keyed by position cannot be matched by key: refused, with what to do.
sum=$(sha256sum format2-random.h5)
expect_exit 2 mpi 2 "$QSWEEP" run format2-random.yaml -o format2-random.h5 --resume --quiet 2>random.txt
# Its simulate tasks also changed numbers version since (docs/sim.md, "Output analysis"), which
# the plan hash catches first; either refusal says what happened and what to do.
grep -qE "format2-random.h5 is of format version 2 \(this qsweep writes 3\) and cannot grow: .* cannot be matched by content; the file still reads, verifies and exports: to continue the study, run it again with --force, or into another file with -o|format2-random.h5 holds the results of a different plan .* made by a qsweep version whose methods give other numbers for its tasks" random.txt ||
  fail "no clear refusal of an old file with simulate rows: $(cat random.txt)"
mpi 2 "$QSWEEP" run format2-random.yaml -o other.h5 --quiet
expect_exit 2 "$QSWEEP" merge other.h5 format2-random.h5 -o merged.h5 2>merge.txt
grep -qE "format2-random.h5 was made by a qsweep that keyed random streams by a task's position|format2-random.h5: the sweep file stored in it expands to plan hash .* made by a qsweep version whose methods give other numbers" merge.txt ||
  fail "no clear refusal of a merge: $(cat merge.txt)"
[ "$(sha256sum format2-random.h5)" = "$sum" ] || fail "a refused --resume changed the file"
[ ! -e merged.h5 ] || fail "a refused merge wrote its output"
mpi 2 "$QSWEEP" run format2-random.yaml -o format2-random.h5 --force --quiet
"$QSWEEP" verify format2-random.h5 >/dev/null || fail "the file run again does not verify"

# Its exact and meanfield tasks give other numbers since (numbers version 2): --resume refuses it,
# the file untouched. (The rewrite of a format 2 file whose tasks keep their numbers is no longer
# covered here: it needs a fixture made by qsweep 0cec410 without such tasks.)
sum=$(sha256sum format2-exact.h5)
expect_exit 2 mpi 2 "$QSWEEP" run format2-exact.yaml -o format2-exact.h5 --resume --quiet 2>exact.txt
grep -q "made by a qsweep version whose methods give other numbers" exact.txt ||
  fail "no clear refusal of an old exact file: $(cat exact.txt)"
[ "$(sha256sum format2-exact.h5)" = "$sum" ] || fail "a refused --resume changed the file"

# A sweep that lists a task in two blocks had a row for each (format2-duplicates.h5: lambda 0.6 in
# both); the plan holds it once since. The file's own plan keeps both rows to read it: status,
# verify and export work, and --resume rewrites it with one row per task (nothing runs).
cp "$FIXTURES/format2-duplicates.h5" .
"$QSWEEP" status format2-duplicates.h5 >status.txt || fail "status: $(cat status.txt)"
"$QSWEEP" verify format2-duplicates.h5 >verify.txt || fail "verify: $(cat verify.txt)"
grep -q "verified:    4 finished rows" verify.txt && grep -q "damaged:     0" verify.txt ||
  fail "verify of the two-block file: $(cat verify.txt)"
mkdir -p csv-duplicates
"$QSWEEP" export format2-duplicates.h5 --dir csv-duplicates/ >/dev/null || fail "export"
[ "$(grep -c . csv-duplicates/exact.csv)" -eq 5 ] || fail "export: $(cat csv-duplicates/exact.csv)"
"$QSWEEP" status format2-duplicates.h5 --yaml >format2-duplicates.yaml
mpi 2 "$QSWEEP" run format2-duplicates.yaml -o format2-duplicates.h5 --resume 2>dup.txt >/dev/null ||
  fail "resume of the two-block file: $(cat dup.txt)"
grep -q "format2-duplicates.h5 rewritten from format version 2 to 6 (3 finished rows kept, 1 rows of tasks an earlier block has left out)" dup.txt ||
  fail "no rewrite message: $(cat dup.txt)"
"$PYTHON" - "$FIXTURES/format2-duplicates.h5" format2-duplicates.h5 <<'PY' || fail "tasks ran again"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1]) as a, h5py.File(sys.argv[2]) as b:
    assert a["tasks/id"].shape == (4,) and b["tasks/id"].shape == (3,)
    assert list(b["exact/lambda"][()]) == [0.3, 0.6, 0.9], b["exact/lambda"][()]
    for name in ("wall_seconds", "rank", "attempts", "status"):  # rows 0, 1 and 3 (1 and 2: 0.6)
        assert np.array_equal(a["tasks/" + name][()][[0, 1, 3]], b["tasks/" + name][()]), name
    assert np.array_equal(a["exact/EQ"][()][[0, 1, 3]], b["exact/EQ"][()])
PY
mpi 2 "$QSWEEP" run format2-duplicates.yaml -o fresh-duplicates.h5 --quiet
$CHECK same format2-duplicates.h5 fresh-duplicates.h5

# Format version 3 (format3-simulate.h5, made by qsweep c61af98 the same way from the sweep stored
# in it: exact and simulate rows): its /simulate lacks the columns added since (start,
# common_random_numbers, EQ_replications, ET_replications). It reads, verifies and exports with
# its own columns; --resume, merge and --reuse of its simulate rows are refused in one line that
# says what to do, the file untouched.
cp "$FIXTURES/format3-simulate.h5" .
"$QSWEEP" status format3-simulate.h5 >status.txt || fail "status: $(cat status.txt)"
grep -q "(qsweep-results v3)" status.txt || fail "status: $(cat status.txt)"
"$QSWEEP" verify format3-simulate.h5 >verify.txt || fail "verify: $(cat verify.txt)"
grep -q "verified:    4 finished rows" verify.txt && grep -q "damaged:     0" verify.txt ||
  fail "verify of the version 3 file: $(cat verify.txt)"
mkdir -p csv-format3
"$QSWEEP" export format3-simulate.h5 --dir csv-format3/ >/dev/null || fail "export"
[ "$(grep -c . csv-format3/simulate.csv)" -eq 3 ] || fail "export: $(cat csv-format3/simulate.csv)"
"$QSWEEP" status format3-simulate.h5 --yaml >format3-simulate.yaml
sum=$(sha256sum format3-simulate.h5)
refusal="format3-simulate.h5 is of format version 3, whose finished simulate rows .* lack what this qsweep stores with each"
expect_exit 2 mpi 2 "$QSWEEP" run format3-simulate.yaml -o format3-simulate.h5 --resume --quiet 2>v3.txt
grep -qE "$refusal.*run it again with --force, or into another file with -o" v3.txt ||
  fail "no clear refusal of --resume: $(cat v3.txt)"
mpi 2 "$QSWEEP" run format3-simulate.yaml -o fresh-format3.h5 --quiet
expect_exit 2 "$QSWEEP" merge fresh-format3.h5 format3-simulate.h5 -o merged3.h5 2>v3.txt
grep -qE "$refusal" v3.txt || fail "no clear refusal of a merge: $(cat v3.txt)"
expect_exit 2 mpi 2 "$QSWEEP" run format3-simulate.yaml -o reused3.h5 --reuse format3-simulate.h5 \
  --quiet 2>v3.txt
grep -qE "$refusal.*reuse a file made since, or run these tasks here" v3.txt ||
  fail "no clear refusal of --reuse: $(cat v3.txt)"
[ "$(sha256sum format3-simulate.h5)" = "$sum" ] || fail "a refusal changed the version 3 file"
[ ! -e merged3.h5 ] && [ ! -e reused3.h5 ] || fail "a refusal wrote its output"

# Format version 4 (format4-mixed.h5, made by qsweep 2cb16e8 from the sweep stored in it: a task
# of every method, a coupled simulate pair among them): its /simulate lacks the totals for a
# common window and its /meanfield the refined mean field's columns (new in version 5). It reads,
# verifies and exports; --resume rewrites it in version 6 with every row kept, and then it equals
# a fresh run but for those totals, which its coupled rows do not have (count 0).
cp "$FIXTURES/format4-mixed.h5" .
"$QSWEEP" status format4-mixed.h5 >status.txt || fail "status: $(cat status.txt)"
grep -q "(qsweep-results v4)" status.txt || fail "status: $(cat status.txt)"
"$QSWEEP" verify format4-mixed.h5 >verify.txt || fail "verify: $(cat verify.txt)"
grep -q "verified:    8 finished rows" verify.txt && grep -q "damaged:     0" verify.txt ||
  fail "verify of the version 4 file: $(cat verify.txt)"
mkdir -p csv-format4
"$QSWEEP" export format4-mixed.h5 --dir csv-format4/ >/dev/null || fail "export"
[ "$(grep -c . csv-format4/meanfield.csv)" -eq 3 ] || fail "export: $(cat csv-format4/meanfield.csv)"
"$QSWEEP" status format4-mixed.h5 --yaml >format4-mixed.yaml
mpi 2 "$QSWEEP" run format4-mixed.yaml -o format4-mixed.h5 --resume 2>v4.txt >/dev/null ||
  fail "--resume of the version 4 file: $(cat v4.txt)"
grep -q "format4-mixed.h5 rewritten from format version 4 to 6 (8 finished rows kept" v4.txt ||
  fail "no rewrite message: $(cat v4.txt)"
"$QSWEEP" verify format4-mixed.h5 >/dev/null || fail "the rewritten file does not verify"
mpi 2 "$QSWEEP" run format4-mixed.yaml -o fresh-format4.h5 --quiet
"$PYTHON" - "$FIXTURES/format4-mixed.h5" format4-mixed.h5 fresh-format4.h5 <<'PY' || fail "version 4 rewrite"
import sys
import h5py
import numpy as np
old, rewritten, fresh = (h5py.File(p, "r") for p in sys.argv[1:])
assert rewritten.attrs["format_version"] == 6, rewritten.attrs["format_version"]
# No task ran again: the rows are the old file's (its wall times, ranks and attempts).
for name in ("wall_seconds", "rank", "attempts"):
    assert np.array_equal(old["tasks"][name][()], rewritten["tasks"][name][()]), name
names = []
rewritten.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
timing = {"tasks/wall_seconds", "tasks/rank", "tasks/checksum", "tasks/attempts",
          "simulate/events_per_second", "ldp/cpu_seconds"}
compared = 0
for name in names:
    if name in timing or "cumulative" in name:
        continue
    a, b = rewritten[name][()], fresh[name][()]
    same = np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    assert a.shape == b.shape and same, f"{name}: {a} vs {b}"
    compared += 1
assert compared > 100, compared
coupled = rewritten["simulate"]["common_random_numbers"][()]
cumulative = [n for n in names if n.startswith("simulate/cumulative")]
assert cumulative, names
for name in cumulative:  # no totals in a row made before them: count 0, the room left NaN
    data = rewritten[name][()]
    if name.endswith("_count"):
        assert not np.any(data), f"{name}: {data}"
    else:
        assert data.dtype.kind != "f" or np.all(np.isnan(data)), f"{name}: {data}"
assert any(n.endswith("_count") for n in cumulative), cumulative
# Its T_p50, T_p90, T_p99 (format version 4 and 5) are T_quantile at the levels 0.5, 0.9, 0.99.
done = ~np.isnan(old["simulate"]["EQ"][()])
assert done.any()
assert "T_p90" not in rewritten["simulate"] and "T_quantile" not in old["simulate"]
levels = rewritten["simulate"]["quantiles"][()]
assert np.all(levels == [0.5, 0.9, 0.99]), levels
for k, p in enumerate(("50", "90", "99")):
    for suffix in ("", "_hw"):
        a = old["simulate"][f"T_p{p}{suffix}"][()][done]
        b = rewritten["simulate"][f"T_quantile{suffix}"][()][done, k]
        assert np.array_equal(a, b), (p, suffix, a, b)
assert rewritten["simulate"]["T_tail"].shape[1] == 0 and rewritten["simulate"]["EQ_t"].shape[1] == 0
print(f"format4-mixed: {compared} datasets equal to a fresh run's; coupled rows {coupled}; "
      f"T_p50, T_p90, T_p99 kept as T_quantile")
PY
python_path=$SOURCE_DIR/python
# The loader reads the version 4 file's quantiles under the names of version 6, and fills the
# columns it lacks as rows without them have them.
PYTHONPATH=$python_path "$PYTHON" - "$FIXTURES/format4-mixed.h5" format4-mixed.h5 <<'PY' ||
import sys
import h5py
import numpy as np
from qsweep_results import load_group, sojourn_quantile, sojourn_tail
old, new = (load_group(p, "simulate") for p in sys.argv[1:])
# (The totals for a common window, new in version 5, stay missing as before.)
assert "T_p90" not in old and list(old) == [n for n in new if not n.startswith("cumulative")], (
    list(old), list(new))
for name in old:
    a, b = old[name], new[name]
    if name in ("task_id", "status", "error", "warning", "events_per_second") or a.dtype == object:
        continue
    assert a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), name
with h5py.File(sys.argv[1], "r") as f:
    rows = [list(f["simulate/task_id"][()]).index(i) for i in old["task_id"]]
    p90, p90_hw = f["simulate/T_p90"][()][rows], f["simulate/T_p90_hw"][()][rows]
q, hw = sojourn_quantile(old, 0.9)
assert np.array_equal(q, p90) and np.array_equal(hw, p90_hw) and not np.isnan(q).all(), (q, p90)
assert np.isnan(sojourn_quantile(old, 0.999)[0]).all() and np.isnan(sojourn_tail(old, 1.0)[0]).all()
assert all(len(x) == 0 for x in old["occupancy_t"])
print("format4-mixed: the loader reads T_p50, T_p90, T_p99 as T_quantile, as the rewritten file holds them")
PY
  fail "the loader on the version 4 file"
PYTHONPATH=$python_path "$PYTHON" - format4-mixed.h5 <<'PY' || fail "paired comparison of the version 4 rows"
import sys
import warnings
from qsweep_results import paired_difference
with warnings.catch_warnings(record=True):
    warnings.simplefilter("always")
    pairs = paired_difference(sys.argv[1], by="policy_d", a=1, b=2)
assert len(pairs) == 1 and pairs[0]["window"] is None, pairs
print("format4-mixed: the coupled pair compared over its own windows, as before the totals")
PY

# Format version 5 (format5-mixed.h5, made by qsweep 3959532 from the sweep stored in it: exact
# and simulate of redundancy-2 on complete, the mean field of redundancy_coc and a refined
# power_of_d, ldp): /meanfield's means per server are EQ, EQ_V and EQ_N (replicas per server under
# redundancy_coc), /exact and /simulate lack EQ_per_server, units are the model's. It reads,
# verifies and exports as it is; --resume rewrites it in version 6 with the names of version 6 and
# EQ_per_server made from the stored means, every row kept, and then it equals a fresh run; a
# merge of it and a fresh file (the same tasks) finds the rows equal.
cp "$FIXTURES/format5-mixed.h5" .
"$QSWEEP" status format5-mixed.h5 >status.txt || fail "status: $(cat status.txt)"
grep -q "(qsweep-results v5)" status.txt || fail "status: $(cat status.txt)"
"$QSWEEP" verify format5-mixed.h5 >verify.txt || fail "verify: $(cat verify.txt)"
grep -q "verified:    7 finished rows" verify.txt && grep -q "damaged:     0" verify.txt ||
  fail "verify of the version 5 file: $(cat verify.txt)"
mkdir -p csv-format5
"$QSWEEP" export format5-mixed.h5 --dir csv-format5/ >/dev/null || fail "export"
head -1 csv-format5/meanfield.csv | grep -q ",EQ,ET," || fail "export: $(head -1 csv-format5/meanfield.csv)"
"$QSWEEP" status format5-mixed.h5 --yaml >format5-mixed.yaml
mpi 2 "$QSWEEP" run format5-mixed.yaml -o fresh-format5.h5 --quiet
"$QSWEEP" merge fresh-format5.h5 format5-mixed.h5 -o merged5.h5 2>merge5.txt >/dev/null ||
  fail "merge of a version 5 and a version 6 file: $(cat merge5.txt)"
mpi 2 "$QSWEEP" run format5-mixed.yaml -o format5-mixed.h5 --resume 2>v5.txt >/dev/null ||
  fail "--resume of the version 5 file: $(cat v5.txt)"
grep -q "format5-mixed.h5 rewritten from format version 5 to 6 (7 finished rows kept" v5.txt ||
  fail "no rewrite message: $(cat v5.txt)"
"$QSWEEP" verify format5-mixed.h5 >/dev/null || fail "the rewritten file does not verify"
"$PYTHON" - "$FIXTURES/format5-mixed.h5" format5-mixed.h5 fresh-format5.h5 merged5.h5 <<'PY' || fail "version 5 rewrite"
import sys
import h5py
import numpy as np
old, rewritten, fresh, merged = (h5py.File(p, "r") for p in sys.argv[1:])
assert rewritten.attrs["format_version"] == 6, rewritten.attrs["format_version"]
for name in ("wall_seconds", "rank", "attempts"):  # no task ran again
    assert np.array_equal(old["tasks"][name][()], rewritten["tasks"][name][()]), name
# The old names' values under the new names; the per-server means made from them.
mf, old_mf = rewritten["meanfield"], old["meanfield"]
for new_name, old_name in (("ER_per_server", "EQ"), ("EQ_per_server_V", "EQ_V"),
                           ("EQ_per_server_N", "EQ_N")):
    assert new_name not in old_mf and old_name not in mf, (new_name, old_name)
    assert np.array_equal(mf[new_name][()], old_mf[old_name][()], equal_nan=True), new_name
policy = mf["policy"].asstr()[()]
d = np.where(policy == "redundancy_coc", mf["policy_d"][()], 1).astype(float)
assert "redundancy_coc" in policy and "power_of_d" in policy, policy
assert np.array_equal(mf["EQ_per_server"][()], old_mf["EQ"][()] / d)
assert np.allclose(mf["ET"][()], mf["EQ_per_server"][()] / mf["lambda"][()], rtol=1e-12)
for group in ("exact", "simulate"):
    g = rewritten[group]
    assert np.array_equal(g["EQ_per_server"][()], old[group]["EQ"][()] / old[group]["N"][()])
assert np.array_equal(rewritten["simulate/EQ_per_server_hw"][()],
                      old["simulate/EQ_hw"][()] / old["simulate/N"][()])
assert rewritten["exact/ET"].attrs["units"] == "1" and rewritten["exact/ET"].attrs["model_units"] == "time"
assert old["exact/ET"].attrs["units"] == "time"
# The rewritten file and the merged one are a fresh run's, but for timings.
timing = {"tasks/wall_seconds", "tasks/rank", "tasks/checksum", "tasks/attempts",
          "simulate/events_per_second", "ldp/cpu_seconds"}
names = []
fresh.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
compared = 0
for other in (rewritten, merged):
    for name in names:
        if name in timing:
            continue
        a, b = other[name][()], fresh[name][()]
        assert a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), \
            f"{other.filename} {name}: {a} vs {b}"
        compared += 1
assert compared > 200, compared
print(f"format5-mixed: {compared} datasets equal to a fresh run's, with the names of version 6")
PY

echo "PASS: format version 2, 3, 4 and 5 files read, verify and export; resumed as far as their rows allow"
