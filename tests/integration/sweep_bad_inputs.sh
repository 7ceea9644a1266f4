#!/usr/bin/env bash
# Every invalid sweep in tests/sweep/bad/ makes `qsweep validate` and `qsweep plan` exit with the
# bad-input code (2), print exactly one line "qsweep: error: FILE:LINE:COLUMN: ..." containing the
# file's "# expect:" fragment, and create no file. A valid sweep with an `output:` key is checked
# the same way for "no file created".
# Usage: sweep_bad_inputs.sh QSWEEP_BINARY SOURCE_DIR
set -euo pipefail
qsweep=$(realpath "$1")
source_dir=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
count=0

check_no_files() {  # $1: what ran
  local listing
  listing=$(cd "$work" && find . -mindepth 1 ! -name '*.yaml' | sort)
  if [[ -n "$listing" ]]; then
    echo "FAIL: $1 created files: $listing"
    failures=$((failures + 1))
  fi
}

for file in "$source_dir"/tests/sweep/bad/*.yaml; do
  name=$(basename "$file")
  cp "$file" "$work/$name"
  expected=$(head -n 1 "$file" | sed 's/^# expect: //')
  for command in validate plan; do
    count=$((count + 1))
    set +e
    (cd "$work" && "$qsweep" "$command" "$name" >"$work/.stdout" 2>"$work/.stderr")
    code=$?
    set -e
    stderr=$(cat "$work/.stderr")
    stdout=$(cat "$work/.stdout")
    rm -f "$work/.stdout" "$work/.stderr"
    lines=$(printf '%s\n' "$stderr" | wc -l)
    if [[ $code -ne 2 ]]; then
      echo "FAIL: $command $name: exit code $code, expected 2"; failures=$((failures + 1))
    fi
    if [[ $lines -ne 1 || -n "$stdout" ]]; then
      echo "FAIL: $command $name: expected one line on stderr and nothing on stdout, got:"
      echo "$stdout$stderr"; failures=$((failures + 1))
    fi
    if ! [[ "$stderr" =~ ^"qsweep: error: $name:"[0-9]+:[0-9]+": " ]]; then
      echo "FAIL: $command $name: not located as $name:LINE:COLUMN: $stderr"; failures=$((failures + 1))
    fi
    if [[ "$stderr" != *"$expected"* ]]; then
      echo "FAIL: $command $name: message lacks '$expected': $stderr"; failures=$((failures + 1))
    fi
    check_no_files "$command $name"
  done
  rm -f "$work/$name"
done

# A valid sweep naming an output file: validate and plan read it and touch nothing.
cat >"$work/good.yaml" <<'YAML'
name: good
output: results/good.h5
blocks:
  - {method: exact, family: ring, N: 4, lambda: [0.5, 2.0]}
YAML
for command in validate plan; do
  (cd "$work" && "$qsweep" "$command" good.yaml >/dev/null)
  check_no_files "$command good.yaml"
done

if [[ $count -lt 60 ]]; then
  echo "FAIL: only $count checks (expected at least 30 bad files x 2 commands)"; failures=$((failures + 1))
fi
echo "$count bad-input checks, $failures failures"
[[ $failures -eq 0 ]]
