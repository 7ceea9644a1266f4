#!/usr/bin/env bash
# The other MPI family's launcher (mpiexec.mpich -n 3 for an Open MPI build, mpirun.openmpi -n 3
# for an MPICH build) starts three one-rank MPI worlds: each must refuse with exit 2, naming the
# launcher's family and the build's, before it touches the results file or its lock (no file, no
# lock). The same launcher with -n 1 gives one process, which runs.
# Usage: run_launcher.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"
if grep -q libmpich <<<"$(ldd "$QSWEEP")"; then  # not a pipe: grep -q would close it early, pipefail
  built="MPICH" launcher_family="Open MPI" other=(mpirun.openmpi --oversubscribe)
else
  built="Open MPI" launcher_family="MPICH" other=(mpiexec.mpich)
fi
command -v "${other[0]}" >/dev/null || { echo "SKIP: ${other[0]} is not installed"; exit 77; }
cat >small.yaml <<'YAML'
name: small
blocks:
  - method: exact
    family: ring
    N: [4, 5]
    lambda: 0.5
    qmax: 5
YAML
rc=0
timeout 120 "${other[@]}" -n 3 "$QSWEEP" run small.yaml -o small.h5 --quiet >out.txt 2>err.txt || rc=$?
[ "$rc" -eq 2 ] || { cat err.txt; fail "${other[0]} -n 3: exit $rc, expected 2"; }
refusal="qsweep: error: started by a launcher of $launcher_family as one of several processes"
[ "$(grep -c "^$refusal" err.txt)" -eq 3 ] || { cat err.txt; fail "${other[0]} -n 3: not one refusal per process"; }
grep -q "but this qsweep is built with $built, which sees 1 rank" err.txt || { cat err.txt; fail "the refusal does not name the build's MPI"; }
[ ! -e small.h5 ] && [ ! -e small.h5.lock ] && [ ! -e small.h5.partial ] || fail "a refused launch touched the results file"
echo "${other[0]} -n 3: $(grep -m1 "^$refusal" err.txt)"
timeout 120 "${other[@]}" -n 1 "$QSWEEP" run small.yaml -o small.h5 --quiet
"$QSWEEP" verify small.h5 >/dev/null
echo "PASS: the other family's launcher is refused by every process it starts; -n 1 runs"
