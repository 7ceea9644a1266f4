#!/usr/bin/env bash
# Checks that every C++ file in git is formatted as .clang-format says; --fix reformats them.
# The format is the one clang-format 14 (Debian 12) produces: other major versions format some
# constructs differently, so with another version the check is skipped with a notice.
set -euo pipefail
cd "$(dirname "$0")/.."
fix=0
[ "${1:-}" = "--fix" ] && fix=1
major=$(clang-format --version | sed -E 's/.*version ([0-9]+).*/\1/')
if [ "$major" != 14 ]; then
  echo "check-format: skipped: the format is clang-format 14's, this is clang-format $major" >&2
  exit 0
fi
# Tracked files and new ones not yet added (ignored files, such as build trees, are left out).
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cpp' '*.hpp' '*.h')
if [ "$fix" = 1 ]; then
  clang-format -i "${files[@]}"
  echo "check-format: reformatted ${#files[@]} files"
elif ! clang-format --dry-run -Werror "${files[@]}"; then
  echo "check-format: the files above differ from .clang-format; fix: bash scripts/check-format.sh --fix" >&2
  exit 1
else
  echo "check-format: ${#files[@]} files formatted"
fi
