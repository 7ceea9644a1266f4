#!/usr/bin/env bash
# What a command writes never destroys what it reads: `export` refuses an output that is the
# results file itself (by any name: the path, a symlink, a hard link) and replaces a CSV only
# once it is complete, so a failed export leaves the old CSV and no temporary file; `run`
# refuses the sweep file as its results file (-o or output:), `merge` one of its inputs. Each
# refusal exits 2 with one line naming both files, and the input is unchanged (cmp with a copy).
# An `output:` of the sweep that is not a possible results file (/dev/null) is refused at its
# line. An empty option value (--output=, -o '') is refused naming the option.
# Usage: output_safety.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"

# refused EXIT FRAGMENT COMMAND...: exits with EXIT, one line "qsweep: error: ..." with FRAGMENT
# on stderr, nothing on stdout.
refused() {
  local expected=$1 fragment=$2 code=0
  shift 2
  "$@" >refused.out 2>refused.err || code=$?
  [ "$code" -eq "$expected" ] || { cat refused.err; fail "exit $code (expected $expected) from: $*"; }
  [ "$(wc -l <refused.err)" -eq 1 ] && [ ! -s refused.out ] ||
    { cat refused.out refused.err; fail "not one line on stderr from: $*"; }
  grep -qF "qsweep: error: " refused.err && grep -qF -- "$fragment" refused.err ||
    fail "'$(cat refused.err)' lacks '$fragment' from: $*"
}
# No temporary CSV left anywhere below the scratch directory.
no_partial() {
  [ -z "$(find . -name '*.partial-*')" ] || fail "temporary files left: $(find . -name '*.partial-*')"
}

cat >s.yaml <<'YAML'
name: safety
blocks:
  - {method: exact, family: ring, N: 4, lambda: [0.5, 0.9]}
YAML
"$QSWEEP" run s.yaml -o r.h5 --quiet
cp r.h5 r.copy

# --- export: the results file as its own output ----------------------------------------------
refused 2 "--csv r.h5 is the results file r.h5" "$QSWEEP" export r.h5 --group tasks --csv r.h5
cmp r.h5 r.copy || fail "export --csv r.h5 changed r.h5"
ln r.h5 hard.h5
refused 2 "--csv hard.h5 is the results file r.h5" "$QSWEEP" export r.h5 --group tasks --csv hard.h5
cmp r.h5 r.copy || fail "export --csv to a hard link of r.h5 changed r.h5"
mkdir linked
ln -s ../r.h5 linked/exact.csv
refused 2 "--dir: linked/exact.csv is the results file r.h5" "$QSWEEP" export r.h5 --dir linked
cmp r.h5 r.copy || fail "export --dir with exact.csv -> r.h5 changed r.h5"
[ ! -e linked/tasks.csv ] || fail "a refused export --dir wrote tasks.csv"
no_partial

# --- export: a failed export leaves the old CSV as it was ----------------------------------------
"$QSWEEP" export r.h5 --group exact --csv old.csv
cp old.csv old.copy
refused 2 "no column 'EQQ'" "$QSWEEP" export r.h5 --group exact --columns EQQ --csv old.csv
cmp old.csv old.copy || fail "an export refused for its columns changed the old CSV"
refused 2 "nothing" "$QSWEEP" export r.h5 --group nothing --csv old.csv
cmp old.csv old.copy || fail "an export refused for its group changed the old CSV"
# A target that is a directory: the CSV is written, its rename fails; no temporary is left.
mkdir -p a-directory/inside
refused 1 "cannot replace a-directory" "$QSWEEP" export r.h5 --group exact --csv a-directory
[ -d a-directory/inside ] || fail "export --csv DIRECTORY changed the directory"
refused 1 "the directory missing does not exist" "$QSWEEP" export r.h5 --group exact --csv missing/exact.csv
no_partial
# A successful export replaces the old CSV, with the mode a plain create gives.
"$QSWEEP" export r.h5 --group exact --columns lambda --csv old.csv
[ "$(head -1 old.csv)" = lambda ] || fail "export did not replace the old CSV"
[ "$(stat -c %a old.csv)" = "$(printf %o $((0666 & ~$(umask))))" ] ||
  fail "the CSV has mode $(stat -c %a old.csv)"
"$QSWEEP" export r.h5 --group exact --csv /dev/stdout >stdout.csv
cmp stdout.csv old.copy || fail "export --csv /dev/stdout is not the CSV"
no_partial

# --- run: the sweep file as the results file, by -o or by its own output: -------------------------
cp s.yaml s.copy
ln -s s.yaml soft.yaml
ln s.yaml hard.yaml
sed 's/^name: safety$/&\noutput: itself.yaml/' s.yaml >itself.yaml
cp itself.yaml itself.copy
before=$(ls)
for output in s.yaml soft.yaml hard.yaml; do
  refused 2 "$output is the sweep file s.yaml" "$QSWEEP" run s.yaml -o "$output" --force
  refused 2 "$output is the sweep file s.yaml" "$QSWEEP" run s.yaml -o "$output" --resume
done
refused 2 "itself.yaml is the sweep file itself.yaml" "$QSWEEP" run itself.yaml --force
cmp s.yaml s.copy && cmp itself.yaml itself.copy || fail "a refused run changed the sweep file"
[ "$(ls)" = "$before" ] || fail "a refused run made files: $(ls)"

# --- run: an output: that cannot be a results file is refused at its line ------------------------
for output in /dev/null /proc/self/mem; do
  sed "s|^name: safety\$|&\noutput: $output|" s.yaml >device.yaml
  refused 2 "qsweep: error: device.yaml:2:9: output $output" "$QSWEEP" run device.yaml --force
done

# --- merge: -o one of the files merged, by any name ---------------------------------------------
cp r.h5 r2.h5
for output in r.h5 hard.h5 linked/exact.csv; do
  refused 2 "-o $output is one of the files merged" "$QSWEEP" merge r.h5 r2.h5 -o "$output" --force
done
cmp r.h5 r.copy || fail "a refused merge changed r.h5"

# --- empty option values: an error naming the option, never a file named after the next argument -
before=$(ls)
refused 2 "--output: empty value" "$QSWEEP" run s.yaml --output= -q
refused 2 "--output: empty value" "$QSWEEP" run s.yaml -o ''
refused 2 "--csv: empty value" "$QSWEEP" export r.h5 --group tasks --csv= --columns id
refused 2 "--dir: empty value" "$QSWEEP" export r.h5 --dir= linked
refused 2 "--group: empty value" "$QSWEEP" export r.h5 --group '' --csv g.csv
refused 2 "file: empty value" "$QSWEEP" status ''
refused 2 "-o: the merged file's path is empty" "$QSWEEP" merge r.h5 r2.h5 -o ''
refused 2 "-o: the merged file's path is empty" "$QSWEEP" merge r.h5 r2.h5 --output= m.h5
refused 2 "merge: an empty file name" "$QSWEEP" merge r.h5 '' -o m.h5
refused 2 "--columns: empty value" "$QSWEEP" export r.h5 --group tasks --csv c.csv --columns ''
[ "$(ls)" = "$before" ] || fail "a refused empty value made files: $(ls)"
cmp r.h5 r.copy || fail "a refused empty value changed r.h5"

echo "PASS: outputs never destroy their inputs"
