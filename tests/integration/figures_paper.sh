#!/usr/bin/env bash
# The paper figures end to end: every sweep in sweeps/paper-*.yaml and sweeps/large-*.yaml
# validates; `python/make_figures.py --run` runs the CI-sized paper sweeps with mpirun (3 ranks)
# and draws them; the small random-regular variant runs on 2 ranks and is drawn with
# --figure; the README walkthrough's commands give a PNG; figures_check.py then checks that every
# figure draws exactly its file's numbers (read with plain h5py), a few published values and
# shapes, and that the PNG/PDF files are real pictures.
# Needs Debian's /usr/bin/python3 with h5py, numpy and matplotlib (skipped, exit 77, without).
# Usage: figures_paper.sh QSWEEP_BINARY SOURCE_DIR
set -Eeuo pipefail
qsweep=$(realpath "$1")
source_dir=$(realpath "$2")
python=/usr/bin/python3
if ! "$python" -c 'import h5py, numpy, matplotlib' 2>/dev/null; then
  echo "figures_paper: skipped: $python lacks h5py, numpy or matplotlib" \
    "(apt install python3-h5py python3-matplotlib)"
  exit 77
fi
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
# The launcher of the MPI qsweep is built with (tests/CMakeLists.txt sets QSWEEP_MPIEXEC): Open
# MPI needs --oversubscribe for more ranks than cores, MPICH's Hydra does it by default.
mpiexec=${QSWEEP_MPIEXEC:-mpirun}
oversubscribe=()
if grep -qE "Open MPI|OpenRTE" <<<"$("$mpiexec" --version 2>&1)"; then oversubscribe=(--oversubscribe); fi
export PYTHONDONTWRITEBYTECODE=1  # no __pycache__ in the source tree
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'echo "figures_paper: FAILED at line $LINENO: $BASH_COMMAND"' ERR
start=$SECONDS

for sweep in "$source_dir"/sweeps/paper-*.yaml "$source_dir"/sweeps/large-*.yaml \
             "$source_dir"/tests/integration/figures_random_regular_ci.yaml; do
  "$qsweep" validate "$sweep" >/dev/null
done

# The one command: run every small paper sweep, then draw every figure. Started from another
# directory through a symlink: the sweeps are found in the script's repository all the same.
mkdir "$work/elsewhere"
ln -s "$source_dir/python/make_figures.py" "$work/elsewhere/make_figures"
(cd "$work/elsewhere" && "$python" ./make_figures --run --qsweep "$qsweep" --ranks 3 --results ../results) \
  >"$work/make_figures.log" 2>&1 || { cat "$work/make_figures.log"; exit 1; }
grep 'ran in' "$work/make_figures.log"

# Any results file, any figure: the cluster-sized random-regular figure on a small file.
"$mpiexec" -n 2 "${oversubscribe[@]}" "$qsweep" run "$source_dir/tests/integration/figures_random_regular_ci.yaml" \
  -o "$work/results/random-regular-ci.h5" >/dev/null 2>&1
"$python" "$source_dir/python/make_figures.py" "$work/results/random-regular-ci.h5" \
  --figure random-regular >/dev/null

# Without --run, a missing results file is an error that says what to do.
if "$python" "$source_dir/python/make_figures.py" --results "$work/empty" 2>"$work/missing.log"; then
  echo "figures_paper: make_figures.py without results should fail"; exit 1
fi
grep -q 'no results yet for paper-' "$work/missing.log"

# The README walkthrough (docs/figures.md), from a fresh directory.
mkdir "$work/walk"
(
  cd "$work/walk"
  "$qsweep" plan "$source_dir/sweeps/paper-redundancy-fig4-occupancy.yaml" >/dev/null
  "$mpiexec" -n 2 "${oversubscribe[@]}" "$qsweep" run "$source_dir/sweeps/paper-redundancy-fig4-occupancy.yaml" \
    >/dev/null 2>&1
  "$qsweep" status results/paper-redundancy-fig4-occupancy.h5 | grep -Eq '^all +8 +8 +0 +0 +0$'
  "$python" "$source_dir/python/make_figures.py" results/paper-redundancy-fig4-occupancy.h5 >/dev/null
  test -s results/figures/paper-redundancy-fig4-occupancy.png
)

files=("$work"/results/paper-*.h5)
[ "${#files[@]}" -eq "$(ls "$source_dir"/sweeps/paper-*.yaml | wc -l)" ]
"$python" "$source_dir/tests/integration/figures_check.py" "$source_dir" "$work/results/figures" \
  "${files[@]}" "$work/results/random-regular-ci.h5=random-regular"
echo "figures_paper: passed in $((SECONDS - start)) s"
