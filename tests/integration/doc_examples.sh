#!/usr/bin/env bash
# Every example of README.md and docs/*.md runs as written (issue 13): the commands, Python and
# YAML are extracted from the documents (doc_examples.py), so the test runs the text a reader
# sees, and every code block is either run here or listed below as not run, with the reason; a
# block that is neither (a new example) fails the test. Each document runs in a fresh scratch
# copy of the repository (sweeps/ and python/ copied, build/qsweep a link to the binary under
# test), its blocks in document order, so later commands use the files earlier ones made; each
# command must exit 0, or the code its comment gives (`# exit N`), and print `N tasks` when its
# comment says so. `qsweep` in a document is
# build/qsweep, and `mpirun` the launcher qsweep is built with, with --oversubscribe.
# Needs Debian's /usr/bin/python3 with h5py, numpy, matplotlib, pandas and xarray (skipped, exit
# 77, without).
# Usage: doc_examples.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"
if ! missing=$("$PYTHON" -c 'import h5py, numpy, matplotlib, pandas, xarray, h5netcdf' 2>&1); then
  echo "doc_examples: skipped: $PYTHON lacks a module the examples use: ${missing##*$'\n'}"
  exit 77
fi
export PYTHONDONTWRITEBYTECODE=1 # no __pycache__ in the copies of python/
EXTRACT=("$PYTHON" "$SOURCE_DIR/tests/integration/doc_examples.py" "$SOURCE_DIR")
start=$SECONDS
keys=() # FILE TAB KEY of every block run or listed as not run
commands_run=0

accounted() { keys+=("$1"$'\t'"$2"); }

# not_run FILE KEY REASON: a block that this test does not run, and why.
not_run() {
  accounted "$1" "$2"
  echo "not run ($1): '$2': $3"
}

# block FILE KEY: BLOCK is a file holding the block's text (the test counts the block as run).
blocks=0
block() {
  blocks=$((blocks + 1))
  BLOCK=$WORK/block.$blocks
  "${EXTRACT[@]}" text "$1" "$2" >"$BLOCK"
  accounted "$1" "$2"
}

# fresh NAME: cd to a new scratch copy of the repository.
fresh() {
  mkdir -p "$WORK/$1/build"
  cp -r "$SOURCE_DIR/sweeps" "$SOURCE_DIR/python" "$WORK/$1/"
  ln -s "$QSWEEP" "$WORK/$1/build/qsweep"
  cd "$WORK/$1"
}

# The shell a document's commands run in.
doc_shell() {
  mpirun() {
    launch_command --oversubscribe "$@"
    "${LAUNCH[@]}"
  }
  qsweep() { build/qsweep "$@"; }
}

# run_commands FILE KEY: runs the block's commands one by one in one shell (a `cd`, `export` or
# `source` carries over to the next command), in the current directory.
lists=0
run_commands() {
  lists=$((lists + 1))
  local list=$WORK/commands.$lists
  "${EXTRACT[@]}" commands "$1" "$2" >"$list"
  accounted "$1" "$2"
  commands_run=$((commands_run + $(tr -cd '\0' <"$list" | wc -c)))
  (
    doc_shell
    _n=0
    while IFS=$'\t' read -r -d '' _code _tasks _command <&3; do
      _n=$((_n + 1)) _rc=0 _began=$SECONDS
      eval "$_command" </dev/null >"$list.$_n.log" 2>&1 || _rc=$?
      if [ "$_rc" -ne "$_code" ]; then
        cat "$list.$_n.log"
        fail "$1 (block '$2'): exit code $_rc (expected $_code) from: $_command"
      fi
      if [ "$_tasks" != - ] && ! grep -qE "(^|[^0-9])$_tasks tasks" "$list.$_n.log"; then
        cat "$list.$_n.log"
        fail "$1 (block '$2'): the output does not say $_tasks tasks, as the comment does: $_command"
      fi
      echo "ok ($1, $((SECONDS - _began)) s): $_command"
    done 3<"$list"
  )
}

# run_python FILE KEY: runs the Python block with Debian's python3 in the current directory.
run_python() {
  block "$1" "$2"
  "$PYTHON" "$BLOCK" >"$WORK/python.log" 2>&1 || { cat "$WORK/python.log"; fail "$1: the Python block '$2' failed"; }
  echo "ok ($1): the Python block '$2'"
}

# validate_yaml FILE KEY [PREFIX]: `qsweep validate` of the YAML block (after PREFIX, to make a
# fragment a sweep); prints its output.
validate_yaml() {
  block "$1" "$2"
  { printf '%s' "${3:-}"; cat "$BLOCK"; } >"$BLOCK.yaml"
  build/qsweep validate "$BLOCK.yaml" || fail "$1: the YAML block '$2' does not validate"
}

# expect_message FILE KEY OUTPUT: OUTPUT's first line is the block's first line, which may end in
# `...` (the rest left out) and start with `FILE:LINE:COLUMN: ` (any file and place).
expect_message() {
  local doc real
  block "$1" "$2"
  doc=$(head -1 "$BLOCK")
  real=$(head -1 "$3")
  if [[ $doc =~ ^[^:\ ]+:[0-9]+:[0-9]+:\ (.*)$ ]]; then
    doc=${BASH_REMATCH[1]}
    real=${real#*:*:*: }
  fi
  if [[ $doc == *... ]]; then real=${real:0:$((${#doc} - 3))} doc=${doc%...}; fi
  [ "$real" = "$doc" ] || fail "$1: the message '$2' is now: $(head -1 "$3")"
  echo "ok ($1): the message '$2'"
}

# ---------------------------------------------------------------------------------------------
# README.md
not_run README.md "bash scripts/setup.sh" "installs Debian packages and builds (minutes)"
not_run README.md "bash scripts/test.sh" "the whole test suite (about 45 minutes), this test in it"
not_run README.md "mpirun -n 2 build/qsweep run sweeps/my-study.yaml -o results/my-study.h5 --resume   # after editing" \
  "needs an edited sweep and two part files: tests/integration/run_grow.sh and run_merge.sh grow and merge"
fresh readme
run_commands README.md "build/qsweep eval --family ring --N 8"
[ -s my-study.csv ] && [ -s csv/exact.csv ] && [ -s csv/tasks.csv ] || fail "README.md: the exports are missing"
run_commands README.md "build/qsweep plan sweeps/paper-jsq-fig2.yaml"
[ -s results/figures/paper-jsq-fig2.png ] && [ -s results/figures/paper-jsq-fig2.pdf ] ||
  fail "README.md: make_figures.py drew no results/figures/paper-jsq-fig2.png and .pdf"

# ---------------------------------------------------------------------------------------------
# docs/building.md
not_run docs/building.md "cmake --preset release" "a build (minutes); scripts/build.sh makes the one under test"
not_run docs/building.md "cmake --install build" "the install and find_package: ctest -R package.consumer"
not_run docs/building.md "find_package(qsweep" "CMake of another project: tests/consumer (package.consumer)"

# ---------------------------------------------------------------------------------------------
# docs/cluster.md
not_run docs/running.md "qsweep: results/my-study.h5 grown from 6 to 10 tasks" "needs a grown file: tests/integration/run_grow.sh checks this message"
not_run docs/running.md "qsweep: removed results/my-study.h5.combined" "needs a killed growth: tests/integration/run_grow.sh and run_merge.sh check this message"
not_run docs/running.md "writing:  host node17" "needs a run holding the file: tests/integration/status_json.sh checks these lines"
not_run docs/running.md "qsweep: thresholds: 4 found (3 converged)" "the end of a refining run with four kinds of thresholds: tests/integration/run_thresholds.sh checks these lines"
not_run docs/running.md "rounds:   20 refinement rounds" "status of a refining run with four kinds of thresholds: tests/integration/run_thresholds.sh checks these lines"
not_run docs/running.md "qsweep: error: study.yaml:8:5: refine: study.h5 holds refined points" "needs a refined file and an edited sweep: tests/integration/run_refine_edit.sh checks this message"
not_run docs/cluster.md "cd /path/to/qsweep" "sbatch on a SLURM cluster: tests/integration/slurm_*.sh"
not_run docs/cluster.md "bash jobs/sweep-array.sh sweeps/my-study.yaml" "sbatch on a SLURM cluster: tests/integration/slurm_array.sh"
not_run docs/cluster.md "module load gcc openmpi" "environment modules and a build on a cluster"
not_run docs/cluster.md "module load gcc mpich" "environment modules and a build on a cluster"
not_run docs/cluster.md "-- qsweep: MPI mpich" "output of configuring an MPICH build (build-mpich/)"
not_run docs/cluster.md "qsweep-job[42] 10:15:02: probe srun" "output of jobs/qsweep-job.sh in a SLURM allocation"
not_run docs/cluster.md "qsweep-job[42] 10:15:02: qsweep is built with" "output of jobs/qsweep-job.sh in a SLURM allocation"
not_run docs/cluster.md "scripts/slurm-local.sh install" "a SLURM cluster on this machine (the slurm label, one at a time)"
not_run docs/cluster.md "ctest --test-dir build -R slurm" "the slurm tests (one cluster at a time on a machine)"
# Read-only commands about the build: run in the build directory under test.
mkdir -p "$WORK/cluster"
ln -s "$(dirname "$QSWEEP")" "$WORK/cluster/build"
cd "$WORK/cluster"
run_commands docs/cluster.md "ldd build/qsweep"
fresh cluster-slurm
rc=0
SLURM_NTASKS=3 SLURM_NPROCS=3 build/qsweep run sweeps/starter.yaml -o x.h5 2>slurm.log || rc=$?
[ "$rc" -eq 2 ] && [ ! -e x.h5 ] || fail "one MPI rank under SLURM_NTASKS=3: exit $rc"
expect_message docs/cluster.md "qsweep: error: SLURM asked for several tasks" slurm.log

# ---------------------------------------------------------------------------------------------
# docs/exact.md, docs/ldp.md, docs/sim.md: formulas, an API fragment, tests and benchmarks
not_run docs/exact.md "pi(c_1..c_M) = C" "a formula"
not_run docs/exact.md "B(A) d(A) = sum_{m in A}" "a formula"
not_run docs/exact.md "P(n) = (1 / mu(U(n)))" "a formula"
not_run docs/exact.md "cmake --preset benchmark" "a benchmark build and run (minutes)"
not_run docs/exact.md "/usr/bin/time -f \"%U user %S sys %e wall %M KiB %R minflt\" build/qsweep eval --family random_regular --N 26" \
  "a measurement: N = 26 takes 1 GiB and seconds"
not_run docs/exact.md "/usr/bin/time -f \"%U user %S sys %e wall %M KiB %R minflt\" build/qsweep eval --family random_regular --N 30" \
  "a measurement: N = 30 takes 16 GiB and minutes"
not_run docs/exact.md "build/bench/qsweep_bench_exact_engines" "a benchmark (the benchmark build)"
not_run docs/exact.md "bash bench/exact_reuse.sh" "a benchmark: two builds, N = 26 tasks of 1 GiB each, minutes"
not_run docs/exact.md "mpiexec -n 1 build/bench/qsweep_bench_exact_mpi_scaling" "a benchmark at N = 26 under a memory budget"
not_run docs/exact.md "/usr/bin/time -f \"%U user %S sys %e wall %M KiB %R minflt\" build/qsweep eval --family random_regular --degree 4 --N 29" \
  "a measurement: N = 29 takes 8 GiB and minutes"
not_run docs/ldp.md "G(K) r_a^A r_s^S" "a formula"
not_run docs/ldp.md "p = sum_k f_k G(k)" "a formula"
not_run docs/ldp.md "cmake --preset release" "a build, the ldp unit tests (ctest -L ldp) and benchmarks"
not_run docs/sim.md "#include \"qsweep/sim/simulate.hpp\"" "a C++ API fragment (tests/sim call it)"
not_run docs/sim.md "cmake --preset release && cmake --build" "a build and the sim unit tests (ctest -L sim)"
not_run docs/sim.md "ninja -C build qsweep_bench_sim_events" "benchmarks"
not_run docs/sim.md "- method: simulate" "a block of a sweep: tests/integration/run_crn.sh runs such blocks"
not_run docs/sim.md "from qsweep_results import paired_difference" \
  "needs a results file of tasks with common random numbers: tests/integration/run_crn.sh calls it"
not_run docs/sim.md "build/bench/qsweep_bench_sim_crn 100 8000" "a benchmark (minutes)"
# The sojourn-time distribution's and the transient mode's keys, each in a minimal simulate block.
fresh sim
validate_yaml docs/sim.md "quantiles: [0.5, 0.9, 0.99, 0.999]" \
  $'name: distribution\nseed: 1\nblocks:\n  - method: simulate\n    family: independent\n    N: 1\n    lambda: 0.5\n' >/dev/null
echo "ok (docs/sim.md): the quantiles and tail_times example validates"
validate_yaml docs/sim.md "start: fixed_point" \
  $'name: transient\nseed: 1\nblocks:\n  - method: simulate\n    family: complete\n    N: 1000\n    d: 2\n    policy: jsq\n    lambda: 0.9\n' >/dev/null
echo "ok (docs/sim.md): the transient example validates"

# ---------------------------------------------------------------------------------------------
# docs/figures.md
fresh figures
run_commands docs/figures.md "build/qsweep validate sweeps/paper-jsq-fig2.yaml"
[ -s results/figures/paper-jsq-fig2.png ] && [ -s results/figures/paper-jsq-fig2.pdf ] ||
  fail "docs/figures.md: make_figures.py drew no results/figures/paper-jsq-fig2.png and .pdf"
not_run docs/figures.md "python/make_figures.py --run" \
  "five sweeps and every figure (30 s and more): tests/integration/figures_paper.sh runs it"
not_run docs/figures.md "build/qsweep plan sweeps/large-jsq-fig2.yaml" "sbatch and squeue on a SLURM cluster"
# The loader example reads the Fig. 4 file.
mpirun -n 2 --oversubscribe build/qsweep run sweeps/paper-redundancy-fig4-occupancy.yaml --quiet
run_python docs/figures.md "import sys; sys.path.insert(0, \"python\")"
# The thresholds example reads a refined file with a crossing.
cat >threshold.yaml <<'YAML'
name: threshold
blocks:
  - method: meanfield
    policy: power_of_d
    policy_d: 2
    lambda: {linspace: [0.5, 0.99, 5]}
    refine: {axis: lambda, quantity: ET, crossing: 5.0, tolerance: 1e-4}
YAML
build/qsweep run threshold.yaml -o results/threshold.h5 --quiet
run_python docs/figures.md "/from qsweep_results import load_thresholds/"
# Installing python/ into a virtual environment: pip builds in the tree, so in a fresh copy, and
# with a scratch HOME (for a venv or pip's cache there).
if "${EXTRACT[@]}" text docs/figures.md /venv/ >/dev/null 2>&1; then
  fresh venv
  mkdir home
  real_home=$HOME
  export HOME=$PWD/home
  run_commands docs/figures.md /venv/
  export HOME=$real_home
fi

# ---------------------------------------------------------------------------------------------
# docs/sweep-format.md
fresh sweep-format
validate_yaml docs/sweep-format.md "name: ring-vs-complete" >/dev/null
echo "ok (docs/sweep-format.md): the example sweep validates"
# The zip fragment, inside a minimal exact block: as many tasks as its comment says.
validate_yaml docs/sweep-format.md "N: [16, 32, 64]" \
  $'name: zip\nblocks:\n  - method: exact\n    family: complete\n' >zip.log
tasks=$(grep -oE '# [0-9]+ tasks' "$BLOCK" | grep -oE '[0-9]+')
grep -q "valid, $tasks tasks" zip.log || { cat zip.log; fail "docs/sweep-format.md: the zip example is not $tasks tasks"; }
echo "ok (docs/sweep-format.md): the zip example validates, $tasks tasks"
# The error message, from the example with the typo it names.
block docs/sweep-format.md "name: ring-vs-complete"
sed 's/^\( *\)lambda:/\1lamda:/' "$BLOCK" >sweeps/x.yaml
rc=0
build/qsweep validate sweeps/x.yaml 2>x.log || rc=$?
[ "$rc" -eq 2 ] || fail "docs/sweep-format.md: a misspelt key gave exit $rc"
expect_message docs/sweep-format.md "sweeps/x.yaml:12:5: unknown key 'lamda'" x.log
run_commands docs/sweep-format.md "qsweep eval --family ring --N 8"
# The refine example: two refining blocks, validated with their initial points.
validate_yaml docs/sweep-format.md "- method: exact" $'name: refine\nblocks:\n' >refine.log
grep -q "valid, 10 tasks (0 outside the stability region; 2 refining blocks" refine.log ||
  { cat refine.log; fail "docs/sweep-format.md: the refine example is not 10 initial tasks"; }
echo "ok (docs/sweep-format.md): the refine example validates, 10 initial tasks"

# ---------------------------------------------------------------------------------------------
# docs/meanfield.md
fresh meanfield
run_commands docs/meanfield.md "/--policy jsq --lambda 0.9 --horizon 20/"
run_commands docs/meanfield.md "/--order 1 --N 100/"
run_commands docs/meanfield.md "/--quantiles/"
not_run docs/meanfield.md "dx_i/dt = lambda" "a formula"
not_run docs/meanfield.md "f_k(x) = lambda" "a formula (tests/meanfield/refined_test.cpp checks it)"
not_run docs/meanfield.md "V = -A^{-1} (b + g(pi))" "a formula (tests/meanfield/refined_test.cpp checks it)"
not_run docs/meanfield.md "dx/dt = f(x),  dW/dt" "a formula (tests/meanfield/refined_test.cpp checks it)"
not_run docs/meanfield.md "c1(x) = S1 (x^d - x^(d-1))" "a formula (tests/meanfield/refined_test.cpp checks it)"
not_run docs/meanfield.md "E[f^N_i] = 0," "a formula (tests/meanfield/refined_test.cpp checks it)"
not_run docs/meanfield.md "(A (+) A (+) A) T = -C3" "a formula (tests/meanfield/refined_test.cpp checks it)"

# ---------------------------------------------------------------------------------------------
# docs/results-layout.md: results/ring.h5 is the sweep-format example's output.
fresh results-layout
block docs/sweep-format.md "name: ring-vs-complete"
cp "$BLOCK" ring-vs-complete.yaml
mpirun -n 2 --oversubscribe build/qsweep run ring-vs-complete.yaml --quiet
[ -e results/ring.h5 ] || fail "the sweep-format example did not write results/ring.h5"
# The diagram of the groups: those of a file with a task of every method, in that order.
block docs/results-layout.md "/                        root attributes"
cat >every-method.yaml <<'YAML'
name: every-method
seed: 1
blocks:
  - {method: exact, family: ring, N: 4, lambda: 0.5}
  - {method: simulate, family: ring, N: 4, lambda: 0.5, horizon: 100, replications: 2}
  - {method: ldp, policy: jsq, n: 4, j: 2, T: 1, lambda: 0.5, estimator: exact}
  - {method: meanfield, lambda: 0.5}
  # A refinement with a crossing: the file has /thresholds too, after the method groups.
  - method: meanfield
    policy: power_of_d
    policy_d: 2
    lambda: [0.6, 0.99]
    refine: {axis: lambda, quantity: ET, crossing: 5.0, tolerance: 0.01}
YAML
build/qsweep run every-method.yaml -o every-method.h5 --quiet
"$PYTHON" - "$BLOCK" every-method.h5 <<'PY' || fail "docs/results-layout.md: the diagram's groups are not the file's"
import re, sys, h5py
shown = re.findall(r"^/(\w+)/", open(sys.argv[1]).read(), re.M)
with h5py.File(sys.argv[2], "r") as f:
    groups = list(f["/"].keys())  # creation order (f.keys() sorts by name)
print("diagram", shown, "file", groups)
sys.exit(shown != groups)
PY
echo "ok (docs/results-layout.md): the diagram's groups"
run_python docs/results-layout.md "import xarray"
run_python docs/results-layout.md "import h5py"
cp every-method.h5 results/threshold.h5
run_python docs/results-layout.md "from h5py import File"

# ---------------------------------------------------------------------------------------------
# docs/running.md
fresh running
block docs/running.md "mpirun -n RANKS qsweep run SWEEP.yaml"
# The synopsis: every option it names is one of its command's (`qsweep help COMMAND`).
while read -r line; do
  [[ $line =~ qsweep\ ([a-z]+) ]] && command=${BASH_REMATCH[1]}
  build/qsweep help "$command" >help.log
  for option in $(grep -oE -- '--[a-z][a-z-]*' <<<"$line"); do
    grep -qE -- "$option\b" help.log || fail "docs/running.md: qsweep $command has no option $option"
  done
done <"$BLOCK"
echo "ok (docs/running.md): the synopsis's options"
rc=0
SLURM_NTASKS=3 SLURM_NPROCS=3 build/qsweep run sweeps/starter.yaml -o x.h5 2>slurm.log || rc=$?
[ "$rc" -eq 2 ] || fail "one MPI rank under SLURM_NTASKS=3: exit $rc"
expect_message docs/running.md "qsweep: error: SLURM asked for several tasks" slurm.log
not_run docs/running.md "qsweep: error: results/ring.h5 is being written by another run" \
  "needs a run holding the file: tests/integration/run_lock.sh checks this message"
not_run docs/running.md "qsweep: error: results/ring.h5.activity.new is a symbolic link" \
  "needs a planted link: tests/integration/run_companions.sh checks this message"
not_run docs/running.md "qsweep: warning: cannot remove results/ring.h5.lock" \
  "needs a directory made read-only during a run: tests/integration/run_companions.sh checks this message"
not_run docs/running.md "qsweep: error: results/my-study.h5 holds the results of a different plan" \
  "needs a finished study and an edit: tests/integration/run_grow.sh and run_keys.sh check this message"
not_run docs/running.md "qsweep: error: --reuse alpha-copy.h5: 1 rows fail verification" \
  "needs a damaged file of another study: tests/integration/run_reuse.sh checks this message"
not_run docs/running.md "qsweep: 3 finished rows reused from alpha.h5" \
  "needs two studies that share tasks: tests/integration/run_reuse.sh checks this message"
not_run docs/running.md "qsweep: shard 2/3: 4 of the 11 tasks of study.yaml" \
  "needs a sweep of 11 tasks: tests/integration/run_parts.sh checks these messages"
not_run docs/running.md "qsweep: results/ring.h5: 3 of 240 rows failed verification" \
  "needs damaged rows: tests/integration/run_corrupt.sh checks this message"
not_run docs/running.md "qsweep: error: started by a launcher of MPICH" \
  "needs the other MPI family's launcher: tests/integration/run_launcher.sh checks this message"
not_run docs/running.md "qsweep: error: a.h5: damaged structure: no dataset /tasks/status" \
  "needs a damaged file (h5py): tests/integration/run_foreign.sh checks this message"
not_run docs/running.md "qsweep: error: --csv r.h5 is the results file r.h5" \
  "a message: tests/integration/output_safety.sh checks it"
# The status examples are of the sweep-format example's results/ring.h5; one more block with an
# unstable load shows the `unstable` section too.
block docs/sweep-format.md "name: ring-vs-complete"
{
  cat "$BLOCK"
  printf '  - method: exact\n    family: ring\n    N: 4\n    lambda: 2.0\n'
} >ring-vs-complete.yaml
mpirun -n 2 --oversubscribe build/qsweep run ring-vs-complete.yaml 2>run.log
# The progress line: the run's last one has the example's shape (its numbers and duration).
"${EXTRACT[@]}" like docs/running.md "qsweep: 1234/5000 tasks" run.log || { cat run.log; exit 1; }
accounted docs/running.md "qsweep: 1234/5000 tasks"
echo "ok (docs/running.md): the progress line"
# `$ qsweep status FILE` and its output: run the command, compare the kinds of lines.
block docs/running.md "\$ qsweep status results/ring.h5"
cp "$BLOCK" status.doc
command=$(head -1 status.doc)
(
  doc_shell
  eval "${command#\$ }"
) >status.out || fail "docs/running.md: ${command#\$ } failed"
"${EXTRACT[@]}" status-shape status.doc status.out || { cat status.out; exit 1; }
echo "ok (docs/running.md): ${command#\$ } gives lines of the example's kinds"
# The --json example has the keys (and value types) of the real output of that file.
block docs/running.md "{"
cp "$BLOCK" status.json.doc
build/qsweep status results/ring.h5 --json >status.json
"${EXTRACT[@]}" json-keys status.json.doc status.json || { cat status.json; exit 1; }
echo "ok (docs/running.md): status --json has the example's keys"

# ---------------------------------------------------------------------------------------------
# docs/python.md: the module of the build under test (BUILD/python), when it is built.
not_run docs/python.md "bash scripts/install-python.sh" \
  "writes into the user's site-packages; tests/python/install.sh runs it with a scratch one"
fresh python
if compgen -G "$(dirname "$QSWEEP")/python/qsweep/_core*.so" >/dev/null; then
  export PYTHONPATH
  PYTHONPATH=$(dirname "$QSWEEP")/python
  run_python docs/python.md "import qsweep"
  run_python docs/python.md "import subprocess"
  unset PYTHONPATH
else
  not_run docs/python.md "import qsweep" "the build has no Python module (QSWEEP_PYTHON off)"
  not_run docs/python.md "import subprocess" "the build has no Python module (QSWEEP_PYTHON off)"
fi
not_run docs/python.md 'results = qsweep.open("results/my-study.h5")' \
  "a fragment (the study of README.md); tests/python/test_module.py opens a results file"

# ---------------------------------------------------------------------------------------------
# Every block of every document is run above or listed as not run.
cd "$SOURCE_DIR"
documents=(README.md docs/*.md)
cd "$WORK"
printf '%s\n' "${keys[@]}" | "${EXTRACT[@]}" audit "${documents[@]}" ||
  fail "blocks above are neither run nor listed as not run: run them in this test, or list them with the reason"
echo "PASS: the documents' examples run ($commands_run commands) in $((SECONDS - start)) s"
