#!/usr/bin/env bash
# Checks that two builds of qsweep write the same results: runs each sweep with both binaries
# and compares every dataset bytewise (type, shape, bytes, attributes), leaving out what differs
# from run to run by design: timings (/tasks/wall_seconds, /ldp/cpu_seconds,
# /simulate/events_per_second), /tasks rank and attempts, the checksum that covers them, and the
# provenance attributes. Named dimensions (dimension scales, which hold no values) and their
# bookkeeping attributes are not compared. Then each binary's `qsweep verify` checks the other's file: the
# checksums are computed over the same bytes in the same order.
# Usage: scripts/compare-results.sh OLD_QSWEEP NEW_QSWEEP SWEEP.yaml...   (ranks: $RANKS, 2)
# Needs mpirun and Debian's h5py (/usr/bin/python3).
set -euo pipefail
old=$1 new=$2
shift 2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for sweep in "$@"; do
  name=$(basename "$sweep" .yaml)
  for side in old new; do
    mpirun --oversubscribe -n "${RANKS:-2}" "${!side}" run -q "$sweep" -o "$work/$name-$side.h5"
  done
  /usr/bin/python3 - "$work/$name-old.h5" "$work/$name-new.h5" <<'PY' || status=1
import sys, h5py
varying = {"/tasks/wall_seconds", "/tasks/rank", "/tasks/attempts", "/tasks/checksum",
           "/ldp/cpu_seconds", "/simulate/events_per_second"}
provenance = {"created", "command_line", "git_commit", "hostname", "mpi_ranks", "qsweep_version"}
dimension_attributes = {"DIMENSION_LIST", "REFERENCE_LIST", "CLASS", "NAME"}
def objects(f):
    found = {"/": f}
    def add(name, obj):
        if not (isinstance(obj, h5py.Dataset) and h5py.h5ds.is_scale(obj.id)):
            found["/" + name] = obj
    f.visititems(add)
    return found
def attributes(path, obj):
    return {k: v for k, v in obj.attrs.items() if k not in dimension_attributes
            and not (path == "/" and k in provenance)}
a, b = (objects(h5py.File(p, "r")) for p in sys.argv[1:3])
problems = []
if a.keys() != b.keys():
    problems.append(f"objects differ: {sorted(a.keys() ^ b.keys())}")
datasets = 0
for path in sorted(a.keys() & b.keys()):
    x, y = a[path], b[path]
    attrs_x, attrs_y = attributes(path, x), attributes(path, y)
    if sorted(attrs_x) != sorted(attrs_y) or any(
            str(attrs_x[k]) != str(attrs_y[k]) for k in attrs_x):
        problems.append(f"{path}: attributes differ")
    if isinstance(x, h5py.Dataset) and path not in varying:
        datasets += 1
        if x.dtype != y.dtype or x.shape != y.shape or x[()].tobytes() != y[()].tobytes():
            problems.append(f"{path}: values differ")
print(f"{sys.argv[1].split('/')[-1][:-7]}: {datasets} datasets compared, "
      + ("identical" if not problems else "DIFFERENT: " + "; ".join(problems[:10])))
sys.exit(1 if problems else 0)
PY
  if "$new" verify "$work/$name-old.h5" >/dev/null && "$old" verify "$work/$name-new.h5" >/dev/null; then
    echo "$name: each binary verifies the other's checksums"
  else
    echo "$name: CHECKSUMS DIFFER"; status=1
  fi
done
exit $status
