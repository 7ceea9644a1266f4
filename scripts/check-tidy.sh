#!/usr/bin/env bash
# Runs clang-tidy (.clang-tidy: bugprone, performance and MPI checks; every finding is an error) on
# each source file of src/ and the headers it includes, with the compile commands of a configured
# build. Sources unchanged since a clean run (in any clone) are not checked again
# (scripts/tidy-cache.py; the keys are kept in ~/.cache/qsweep/tidy).
# Usage: scripts/check-tidy.sh [BUILD_DIR, default build]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
if [ ! -f "$build/compile_commands.json" ]; then
  echo "check-tidy: $build/compile_commands.json is missing: configure first (scripts/build.sh)" >&2
  exit 2
fi
# The build's generated sources (git_commit.cpp) exist once it has been built.
cmake --build "$build" --target qsweep_git_commit >/dev/null
# Sources whose inputs are those of an earlier clean run are skipped (scripts/tidy-cache.py).
pending=$(python3 scripts/tidy-cache.py pending "$build" "$PWD/src/")
total=$(grep -c '"file": "'"$PWD"'/src/' "$build/compile_commands.json")
if [ -z "$pending" ]; then
  echo "check-tidy: src/ is clean ($total files, none changed since the last clean run)"
  exit 0
fi
mapfile -t keys < <(cut -d' ' -f1 <<<"$pending")
mapfile -t files < <(cut -d' ' -f2- <<<"$pending" | sed 's/[.]/\\./g; s/.*/^&$/')
if run-clang-tidy -quiet -p "$build" -j "$(nproc)" "${files[@]}" > "$build/clang-tidy.log" 2>&1; then
  python3 scripts/tidy-cache.py record "${keys[@]}"
  echo "check-tidy: src/ is clean ($total files; ${#files[@]} checked, the others unchanged since a clean run)"
else
  grep -E -A3 "(warning|error):" "$build/clang-tidy.log" | head -200 >&2
  echo "check-tidy: findings above (all of them: $build/clang-tidy.log)" >&2
  exit 1
fi
