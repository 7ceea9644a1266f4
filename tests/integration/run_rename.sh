#!/usr/bin/env bash
# A study's name is part of its identity, for --resume as for merge: a sweep renamed in its YAML
# (`name:`) does not continue a file of the old name, neither as it is nor grown (exit 2, one
# line saying how to proceed, the file untouched), as merge refuses files of two names; with the
# name put back, --resume continues it.
# Usage: run_rename.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"
cat >study.yaml <<'YAML'
name: ring-study
blocks:
  - method: exact
    family: ring
    N: [4, 5]
    lambda: 0.5
    qmax: 5
YAML
sed 's/^name: ring-study/name: renamed-study/' study.yaml >renamed.yaml
sed 's/N: \[4, 5\]/N: [4, 5, 6]/' renamed.yaml >renamed-grown.yaml
"$QSWEEP" run study.yaml -o study.h5 --quiet
cp study.h5 before.h5
for sweep in renamed.yaml renamed-grown.yaml; do
  expect_exit 2 timeout 60 "$QSWEEP" run "$sweep" -o study.h5 --resume --quiet 2>err.txt
  [ "$(wc -l <err.txt)" -eq 1 ] || { cat err.txt; fail "$sweep: more than one line"; }
  grep -qF "qsweep: error: study.h5 holds the study 'ring-study', $sweep names it 'renamed-study'" err.txt &&
    grep -qF 'put back `name: ring-study` to continue it' err.txt || { cat err.txt; fail "$sweep: no refusal of the new name"; }
  cmp -s before.h5 study.h5 || fail "$sweep: the refused resume changed the file"
done
echo "resume: $(cat err.txt)"
# merge refuses the same two names.
"$QSWEEP" run renamed.yaml -o renamed.h5 --quiet
expect_exit 2 "$QSWEEP" merge study.h5 renamed.h5 -o merged.h5 2>err.txt
grep -q "qsweep merge joins files of one study (the same name:)" err.txt || { cat err.txt; fail "merge did not refuse two names"; }
[ ! -e merged.h5 ] || fail "the refused merge wrote merged.h5"
# With its name, the grown sweep continues the file.
sed 's/^name: renamed-study/name: ring-study/' renamed-grown.yaml >grown.yaml
"$QSWEEP" run grown.yaml -o study.h5 --resume --quiet 2>grow.txt
grep -q "grown from 2 to 3 tasks" grow.txt || { cat grow.txt; fail "the sweep with its name did not grow the file"; }
echo "PASS: a renamed study is refused by --resume as by merge; with its name it continues"
