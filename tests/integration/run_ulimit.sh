#!/usr/bin/env bash
# Under an address-space limit (ulimit -v, as Torque and PBS set it) the default per-task memory
# limit is that room, not the machine's memory: an exact ring N = 27 task (2 GiB) that cannot be
# mapped under ulimit -v 1.5 GiB is refused up front by `qsweep eval` and `qsweep run` (exit 2,
# "needs an estimated 2.00 GiB", nothing written) instead of failing with std::bad_alloc (exit 3);
# a small task still runs under the same limit.
# Usage: run_ulimit.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"
limit_kib=1500000
cat >big.yaml <<'YAML'
name: big-ring
blocks:
  - method: exact
    family: ring
    N: 27
    lambda: 0.5
    qmax: 5
YAML
sed 's/N: 27/N: 8/' big.yaml >small.yaml

# under_limit EXPECTED COMMAND...: COMMAND under ulimit -v exits EXPECTED (stderr in err.txt).
under_limit() {
  local expected=$1 rc=0
  shift
  (ulimit -v "$limit_kib" && exec "$@") >out.txt 2>err.txt || rc=$?
  [ "$rc" -eq "$expected" ] || { cat err.txt; fail "exit code $rc (expected $expected) under ulimit -v $limit_kib from: $*"; }
}
refusal='needs an estimated 2.00 GiB .*this process.s address-space limit \(ulimit -v\) 1.43 GiB'
under_limit 2 "$QSWEEP" eval --family ring --N 27 --lambda 0.5 --qmax 5
grep -qE "$refusal" err.txt || { cat err.txt; fail "eval: no refusal naming ulimit -v"; }
echo "eval: $(cat err.txt)"
under_limit 2 "$QSWEEP" run big.yaml -o big.h5 --quiet
grep -qE "^qsweep: error: big.yaml:3:5: task 0 .*$refusal" err.txt || { cat err.txt; fail "run: no refusal naming ulimit -v"; }
[ "$(wc -l <err.txt)" -eq 1 ] || { cat err.txt; fail "run: more than one line"; }
[ ! -e big.h5 ] && [ ! -e big.h5.partial ] || fail "run: a refused sweep wrote a file"
under_limit 0 "$QSWEEP" eval --family ring --N 8 --lambda 0.5 --qmax 5
under_limit 0 "$QSWEEP" run small.yaml -o small.h5 --quiet
echo "PASS: under ulimit -v a task that cannot be mapped is refused up front; a small one runs"
