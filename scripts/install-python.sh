#!/usr/bin/env bash
# Makes `import qsweep` work for Debian's /usr/bin/python3 from any directory, without root: writes
# qsweep.pth, which names BUILD_DIR/python (the package qsweep with its compiled module qsweep._core,
# and the results loader qsweep_results), into that python's user site-packages
# (~/.local/lib/python3.X/site-packages, or under $PYTHONUSERBASE when set). Rebuilding updates
# what it names; deleting the file undoes it. docs/python.md.
# Usage: scripts/install-python.sh [BUILD_DIR, default build]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
python=/usr/bin/python3
dir="$(cd "$build" && pwd)/python"
if ! compgen -G "$dir/qsweep/_core*.so" >/dev/null; then
  echo "install-python: no built module in $dir/qsweep: build first (scripts/build.sh; the module" \
       "needs pybind11-dev python3-pybind11 python3-dev, scripts/install-deps.sh)" >&2
  exit 1
fi
site=$("$python" -m site --user-site)
mkdir -p "$site"
echo "$dir" > "$site/qsweep.pth"
if ! (cd / && "$python" -c "import qsweep"); then
  echo "install-python: wrote $site/qsweep.pth, but $python does not import qsweep through it" \
       "(user site-packages disabled? see '$python -m site')" >&2
  exit 1
fi
echo "install-python: $python imports qsweep from $dir ($site/qsweep.pth)"
