#!/usr/bin/env bash
# Every invalid sweep in tests/sweep/bad/ makes `qsweep validate` and `qsweep plan` exit with the
# bad-input code (2), print exactly one line "qsweep: error: FILE:LINE:COLUMN: ..." containing the
# file's "# expect:" fragment, and create no file, under `ulimit -v 4000000` (4 GB of address
# space) and within 5 s: a bound that only a runaway allocation or loop can break (they answer
# in milliseconds), so the test does not depend on the machine's speed. A valid sweep with an
# `output:` key is checked the same way for "no file created". Paths that are not sweep files
# (/dev/zero, a directory, a file over the size limit) are refused the same way, naming the path.
# Usage: sweep_bad_inputs.sh QSWEEP_BINARY SOURCE_DIR
set -euo pipefail
qsweep=$(realpath "$1")
source_dir=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
count=0

limit_ms=5000

# Runs qsweep with limited memory in $work; sets code, stdout, stderr and elapsed_ms.
run_limited() {
  local start
  start=$(date +%s%N)
  set +e
  (ulimit -v 4000000 && cd "$work" && exec "$qsweep" "$@" >"$work/.stdout" 2>"$work/.stderr")
  code=$?
  set -e
  elapsed_ms=$((($(date +%s%N) - start) / 1000000))
  stderr=$(cat "$work/.stderr")
  stdout=$(cat "$work/.stdout")
  rm -f "$work/.stdout" "$work/.stderr"
}

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
    run_limited "$command" "$name"
    lines=$(printf '%s\n' "$stderr" | wc -l)
    if [[ $code -ne 2 ]]; then
      echo "FAIL: $command $name: exit code $code, expected 2"; failures=$((failures + 1))
    fi
    if [[ $elapsed_ms -gt $limit_ms ]]; then
      echo "FAIL: $command $name: took $elapsed_ms ms (limit $limit_ms)"; failures=$((failures + 1))
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

# Not sweep files: refused by type or size before they are read, one line naming the path.
mkdir "$work/a-directory"
truncate -s 5M "$work/too-big.yaml"  # sparse: no disk space used
for path in /dev/zero "$work/a-directory" "$work/too-big.yaml"; do
  for command in validate plan; do
    run_limited "$command" "$path"
    lines=$(printf '%s\n' "$stderr" | wc -l)
    if [[ $code -ne 2 || $lines -ne 1 || -n "$stdout" || $elapsed_ms -gt $limit_ms ||
          "$stderr" != "qsweep: error: $path: "*"; expected "* ]]; then
      echo "FAIL: $command $path: exit $code after $elapsed_ms ms, expected 2 and one line" \
        "'qsweep: error: $path: ...; expected ...', got: $stdout$stderr"
      failures=$((failures + 1))
    fi
  done
done
rm -rf "$work/a-directory" "$work/too-big.yaml"
check_no_files "the non-sweep paths"

if [[ $count -lt 200 ]]; then
  echo "FAIL: only $count checks (expected at least 100 bad files x 2 commands)"; failures=$((failures + 1))
fi
echo "$count bad-input checks, $failures failures"
[[ $failures -eq 0 ]]
