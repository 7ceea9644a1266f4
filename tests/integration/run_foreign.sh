#!/usr/bin/env bash
# Foreign and damaged results files: each of status, verify, export, merge and run --resume
# refuses every one with exit 2 and one line naming the file and what is wrong, writing nothing
# (merge's output is not made, --resume leaves the file as it was). The files are made from a
# real small run with h5py (the format attributes without datasets, no /tasks, /tasks/status of
# the wrong type, shape or kind, format_version -1 or text) and by truncation (one byte: the
# message suggests h5clear --increment; half, then h5clear --increment: damaged metadata). status
# shows a foreign file's attributes with their control bytes as \xNN.
# Usage: run_foreign.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"
sweep=$SOURCE_DIR/tests/integration/run_mixed.yaml
"$QSWEEP" run "$sweep" -o good.h5 --quiet

"$PYTHON" - <<'PY'
import shutil, h5py, numpy as np
def copy(name):
    shutil.copy("good.h5", name)
    return h5py.File(name, "r+")
with h5py.File("good.h5", "r") as good, h5py.File("attributes_only.h5", "w") as f:
    for key, value in good.attrs.items():
        f.attrs[key] = value
with copy("no_tasks.h5") as f:
    del f["tasks"]
with copy("status_float.h5") as f:
    n = f["tasks/status"].shape[0]
    del f["tasks/status"]
    f["tasks/status"] = np.zeros(n)
with copy("status_2d.h5") as f:
    status = f["tasks/status"]
    n, kind = status.shape[0], status.dtype
    del f["tasks/status"]
    f.create_dataset("tasks/status", (n, 2), dtype=kind)
with copy("status_group.h5") as f:
    del f["tasks/status"]
    f.create_group("tasks/status")
with copy("version_negative.h5") as f:
    f.attrs["format_version"] = np.int64(-1)
with copy("version_text.h5") as f:
    f.attrs["format_version"] = "two"
with copy("control_bytes.h5") as f:
    f.attrs["sweep_name"] = "run-mixed\x1b[2J\nforged: line"
    f.attrs["hostname"] = "node\x07"
with copy("not_utf8.h5") as f:
    f.attrs["sweep_name"] = np.bytes_(b"run-\xff\xfe")
PY
size=$(stat -c %s good.h5)
head -c $((size - 1)) good.h5 >truncated.h5
head -c $((size / 2)) good.h5 >half_cleared.h5
h5clear --increment half_cleared.h5

# refused FILE PATTERN: every command on a copy of FILE exits 2 with one line naming it and
# matching PATTERN, and writes nothing.
refused() {
  local file=$1 pattern=$2 command rc
  for command in status verify export merge resume; do
    rm -rf work.h5 merged.h5 csv && mkdir csv && cp "$file" work.h5
    rc=0
    case $command in
      status) timeout 30 "$QSWEEP" status work.h5 >out.txt 2>err.txt || rc=$? ;;
      verify) timeout 30 "$QSWEEP" verify work.h5 >out.txt 2>err.txt || rc=$? ;;
      export) timeout 30 "$QSWEEP" export work.h5 --dir csv >out.txt 2>err.txt || rc=$? ;;
      merge) timeout 30 "$QSWEEP" merge good.h5 work.h5 -o merged.h5 >out.txt 2>err.txt || rc=$? ;;
      resume) timeout 30 "$QSWEEP" run "$sweep" -o work.h5 --resume --quiet >out.txt 2>err.txt || rc=$? ;;
    esac
    [ "$rc" -eq 2 ] || { cat err.txt; fail "$file: $command exited with $rc, expected 2"; }
    [ "$(wc -l <err.txt)" -eq 1 ] || { cat err.txt; fail "$file: $command printed more than one line"; }
    grep -qE "^qsweep: error: work\.h5: .*$pattern" err.txt ||
      { cat err.txt; fail "$file: $command did not say '$pattern' about work.h5"; }
    [ -z "$(ls csv)" ] && [ ! -e merged.h5 ] && [ ! -e merged.h5.combined ] ||
      fail "$file: $command wrote something"
    cmp -s "$file" work.h5 || fail "$file: $command changed it"
  done
  echo "$file: refused by every command: $(cat err.txt)"
}
refused attributes_only.h5 "no dataset /tasks/status"
refused no_tasks.h5 "no dataset /tasks/status"
refused status_float.h5 "/tasks/status has the wrong type"
refused status_2d.h5 "/tasks/status has the wrong rank"
refused status_group.h5 "H5Dopen2\(/tasks/status\) failed"
refused version_negative.h5 "format_version is -1, not a format version"
refused version_text.h5 "format_version is two, not a format version"
refused truncated.h5 "shorter than HDF5 recorded: \`h5clear --increment work.h5\`"
# Cleared of half its bytes, /tasks still reads (status shows it), the groups' metadata not.
for command in verify merge resume; do
  cp half_cleared.h5 work.h5
  rc=0
  case $command in
    verify) "$QSWEEP" verify work.h5 >/dev/null 2>err.txt || rc=$? ;;
    merge) rm -f merged.h5; "$QSWEEP" merge good.h5 work.h5 -o merged.h5 >/dev/null 2>err.txt || rc=$? ;;
    resume) "$QSWEEP" run "$sweep" -o work.h5 --resume --quiet 2>err.txt || rc=$? ;;
  esac
  [ "$rc" -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "^qsweep: error: work.h5: damaged structure: " err.txt ||
    { cat err.txt; fail "half_cleared.h5: $command exited with $rc, expected 2 and one line"; }
done
echo "half_cleared.h5: verify, merge and resume refuse it: $(cat err.txt)"
# A file truncated by one byte and cleared: what verify says depends on what the byte held (HDF5
# writes metadata last on close): intact (0, padding), damaged rows (5), or a damaged structure
# refused in one line (2, a metadata block) - never a crash or a silent success.
cp truncated.h5 cleared.h5
h5clear --increment cleared.h5
rc=0
"$QSWEEP" verify cleared.h5 >verify.txt 2>err.txt || rc=$?
case $rc in
  0 | 5) ;;
  2) [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "^qsweep: error: cleared.h5: damaged structure: " err.txt ||
    { cat err.txt; fail "verify of the cleared truncated file: exit 2 without its one-line reason"; } ;;
  *) fail "verify of the cleared truncated file exited with $rc" ;;
esac
echo "truncated by one byte, cleared: verify exits $rc"

# status shows control bytes of a foreign file's attributes as \xNN: no escape, no forged line.
expect_exit 0 "$QSWEEP" status control_bytes.h5 >status.txt
grep -qF 'sweep:    run-mixed\x1b[2J\x0aforged: line from' status.txt || { cat status.txt; fail "status printed the name raw"; }
grep -qF 'on node\x07 by' status.txt || { cat status.txt; fail "status printed the host raw"; }
! grep -q $'\x1b\|\x07' status.txt || fail "status printed control bytes"
! grep -q '^forged' status.txt || fail "status printed a forged line"
# Bytes that are not UTF-8 in a foreign file's attribute: status --json still prints JSON.
expect_exit 0 "$QSWEEP" status not_utf8.h5 --json >status.json
/usr/bin/python3 -c 'import json, sys; json.load(open(sys.argv[1]))' status.json ||
  fail "status --json of a file with non-UTF-8 attribute bytes is not JSON"
echo "PASS: foreign and damaged results files are refused with exit 2 by every command"
