#!/usr/bin/env bash
# Fuzzing the sweep reader: sweep_fuzz.py writes 300 malformed sweeps (random edits of the example
# sweeps in sweeps/, blocks of huge sizes for every method; a fixed seed, the same cases on every
# run), and `qsweep validate` and `qsweep plan` of each must exit 0 or 2 (never 1, 3 or a
# signal), print exactly one line on stderr for 2 ("qsweep: error: ..." without a raw control
# byte), create no file, under `ulimit -v 4000000` and within 5 s of CPU: a bound only a runaway
# loop or allocation breaks (a run still going after 30 s is killed). A failing case is shown in the
# message (its file name and first bytes).
# Usage: sweep_fuzz.sh QSWEEP_BINARY SOURCE_DIR [COUNT [SEED]]
set -euo pipefail
qsweep=$(realpath "$1")
source_dir=$(realpath "$2")
count=${3:-300}
seed=${4:-20261206}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
limit_ms=5000
failures=0
runs=0

/usr/bin/python3 "$source_dir/tests/integration/sweep_fuzz.py" "$source_dir/sweeps" "$work/cases" \
  "$count" "$seed"
mkdir "$work/run"
for file in "$work"/cases/*.yaml; do
  name=$(basename "$file")
  cp "$file" "$work/run/$name"
  for command in validate plan; do
    runs=$((runs + 1))
    set +e
    (ulimit -v 4000000 && cd "$work/run" &&
      exec /usr/bin/time -f "%U %S" -o "$work/cpu" timeout -s KILL 30 "$qsweep" "$command" \
        "$name" >/dev/null 2>"$work/stderr")
    code=$?
    set -e
    # CPU seconds, not wall-clock: the machine may be busy with other tests.
    elapsed_ms=$(awk 'END { printf "%d", ($1 + $2) * 1000 }' "$work/cpu")
    problem=""
    if [[ $code -ne 0 && $code -ne 2 ]]; then
      problem="exit code $code"
    elif [[ $elapsed_ms -gt $limit_ms ]]; then
      problem="took $elapsed_ms ms of CPU (limit $limit_ms)"
    elif [[ $code -eq 2 ]]; then
      # One line: exactly one newline, at the end; no other control byte.
      if [[ $(tr -d -c '\n' <"$work/stderr" | wc -c) -ne 1 ]] ||
        LC_ALL=C grep -q '[[:cntrl:]]' "$work/stderr" ||
        [[ "$(head -c 15 "$work/stderr")" != "qsweep: error: " ]]; then
        problem="not one clean line on stderr"
      fi
    fi
    listing=$(cd "$work/run" && find . -mindepth 1 ! -name "$name")
    [[ -z "$listing" ]] || problem="${problem:+$problem; }created $listing"
    if [[ -n "$problem" ]]; then
      failures=$((failures + 1))
      echo "FAIL: qsweep $command $name: $problem"
      echo "  stderr: $(head -c 300 "$work/stderr" | od -c | head -5)"
      echo "  case: $(head -c 300 "$file" | od -c | head -8)"
      (cd "$work/run" && find . -mindepth 1 ! -name "$name" -exec rm -rf {} +)
    fi
  done
  rm -f "$work/run/$name"
done
if [[ $failures -ne 0 ]]; then
  echo "FAIL: $failures of $runs runs (seed $seed)"
  exit 1
fi
echo "PASS: $runs runs of qsweep validate and plan on $count generated sweeps (seed $seed)"
