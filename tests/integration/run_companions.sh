#!/usr/bin/env bash
# The files beside a results file OUT (OUT.lock, OUT.activity and its .new, OUT.partial,
# OUT.combined ...) and the one-writer lock under any name of OUT:
# - a name too long for its companions (249 and 255 bytes) is refused up front: exit 2, one line,
#   nothing written;
# - a symbolic link planted at OUT.activity.new or OUT.lock is refused (exit 2) and its target
#   left as it was;
# - while a run holds OUT (a held task, so this does not depend on speed), a second run through
#   a symbolic link or a hard link to OUT is refused (exit 2) and status shows the writer under
#   either name; --force and growing through a symbolic link write the target and keep the link;
# - as root: a run on a full file system (a small private tmpfs) says "No space left on device"
#   and leaves no companion behind; a run that cannot remove its companions at the end (its
#   directory made read-only for it while it runs) names them in a warning.
# Usage: run_companions.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"

cat >small.yaml <<'EOF'
name: companions
blocks:
  - method: exact
    family: complete
    N: 4
    d: 2
    lambda: [0.3, 0.6]
    qmax: 10
EOF
{ cat small.yaml; printf '  - method: exact\n    family: ring\n    N: 4\n    lambda: 0.5\n    qmax: 10\n'; } >grown.yaml

# --- names too long for the companions ----------------------------------------------------------
for length in 249 255; do
  mkdir names
  name=$(head -c "$length" /dev/zero | tr '\0' a)
  (cd names && expect_exit 2 "$QSWEEP" run ../small.yaml -o "$name" --quiet 2>../err.txt)
  [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "^qsweep: error: .* is $length bytes long, .*(OUT.combined.partial).*use a name of at most 238 bytes$" err.txt ||
    { cat err.txt; fail "a $length-byte name: not the one-line refusal"; }
  [ -z "$(ls -A names)" ] || fail "a $length-byte name left files: $(ls -A names)"
  rm -r names
done

# --- links planted at companions ----------------------------------------------------------------
echo precious >target
for companion in activity.new lock; do
  ln -s "$WORK/target" "planted.h5.$companion"
  expect_exit 2 "$QSWEEP" run small.yaml -o planted.h5 --quiet 2>err.txt
  grep -q "^qsweep: error: planted.h5.$companion is a symbolic link, which qsweep did not make" err.txt ||
    { cat err.txt; fail "a link at planted.h5.$companion: not refused"; }
  [ "$(cat target)" = precious ] || fail "the target of planted.h5.$companion was written"
  [ ! -e planted.h5 ] || fail "a run refused for planted.h5.$companion made planted.h5"
  rm "planted.h5.$companion"
done

# --- a second run through a link while the first holds the file ---------------------------------
hold_tasks hold 0 1
start_job -n 1 "$QSWEEP" run small.yaml -o out.h5 --quiet 2>a.log
wait_started "$JOB_PID"
no_hold
ln out.h5 hard.h5
ln -s out.h5 sym.h5
for flags in --resume --force; do
  expect_exit 2 "$QSWEEP" run small.yaml -o sym.h5 --quiet "$flags" 2>b.log
  grep -q "^qsweep: error: out.h5 is being written by another run (host $(hostname), pid [0-9]*, started .*command: .*small.yaml" b.log ||
    { cat b.log; fail "a run through a symbolic link ($flags) was not refused with the holder"; }
  expect_exit 2 "$QSWEEP" run small.yaml -o hard.h5 --quiet "$flags" 2>b.log
  grep -q "^qsweep: error: hard.h5 is being written by another run (under another name of the same file, a hard link" b.log ||
    { cat b.log; fail "a run through a hard link ($flags) was not refused"; }
done
"$QSWEEP" status sym.h5 >status.log || true
grep -q "^writing:  host $(hostname), pid" status.log || { cat status.log; fail "status through the symbolic link shows no holder"; }
"$QSWEEP" status hard.h5 >status.log || true
grep -q "^writing:  under another name" status.log || { cat status.log; fail "status through the hard link shows no holder"; }
release_all
wait "$JOB_PID" || { cat a.log; fail "the holding run failed"; }
stop_releasing
expect_exit 0 "$QSWEEP" verify hard.h5 >/dev/null
ls out.h5.* hard.h5.* sym.h5.* 2>/dev/null && fail "companions left behind"

# --- --force and growing through a symbolic link keep the link ----------------------------------
"$QSWEEP" run small.yaml -o sym.h5 --quiet --force
[ -L sym.h5 ] || fail "--force through a symbolic link replaced the link"
"$QSWEEP" run grown.yaml -o sym.h5 --quiet --resume 2>grow.log
grep -q "out.h5 grown from 2 to 3 tasks" grow.log || { cat grow.log; fail "not grown"; }
[ -L sym.h5 ] || fail "growing through a symbolic link replaced the link"
"$QSWEEP" status out.h5 --json | "$PYTHON" -c 'import json, sys; assert json.load(sys.stdin)["plan"]["tasks"] == 3' ||
  fail "the target of the link was not grown"

if [ "$(id -u)" -ne 0 ]; then
  echo "PASS (not root: the full and read-only file systems skipped)"
  exit 0
fi

# --- a full file system -------------------------------------------------------------------------
mkdir full
trap 'umount "$WORK/full" 2>/dev/null; stop_releasing; end_jobs; rm -rf "$WORK"' EXIT
mount -t tmpfs -o size=64k tmpfs full
head -c 65536 /dev/zero >full/fill 2>/dev/null || true
expect_exit 1 "$QSWEEP" run small.yaml -o full/out.h5 --quiet 2>full.log
grep -q "^qsweep: rank 0: error: .*; No space left on device (full has no free space)" full.log ||
  { cat full.log; fail "the error of a run on a full disk does not say so"; }
grep -q "^qsweep: warning: cannot write who holds the lock into full/out.h5.lock: No space left on device" full.log ||
  { cat full.log; fail "the lock's holder text that could not be written is not said"; }
[ "$(ls -A full)" = fill ] || fail "a run on a full disk left $(ls -A full)"

# --- companions that cannot be removed ----------------------------------------------------------
# The run as user nobody in a directory of its own, which is made read-only for it while it runs.
chmod 755 "$WORK"
mkdir ro && chown nobody ro
hold_tasks hold 0 1
chmod 666 hold/started hold/release
setpriv --reuid=nobody --regid=nogroup --clear-groups "$QSWEEP" run small.yaml -o ro/out.h5 --quiet 2>ro.log &
JOB_PID=$!
wait_started "$JOB_PID"
no_hold
chmod 555 ro
release_all
wait "$JOB_PID" || { cat ro.log; fail "the run in a read-only directory failed"; }
stop_releasing
grep -q "^qsweep: warning: cannot remove ro/out.h5.lock: Permission denied; remove it by hand" ro.log ||
  { cat ro.log; fail "the lock file left behind is not named"; }
echo "PASS: companions and the lock under any name"
