#!/usr/bin/env bash
# Refining sweeps with --reuse, --shard, --select and edited sweeps (issue 33; docs/running.md,
# "Refinement rounds"):
# - --reuse: each round's tasks of the key of a finished row of the other file are copied, so
#   the rounds are decided from the same values: the file equals a run without --reuse (the
#   copied rows' reused_from aside), and none of the refined points is computed again;
# - an edited sweep that adds a block grows the file (--resume): its rounds are found again from
#   the rows by key, and the file equals a run of the edited sweep;
# - a tighter tolerance goes on from the rounds the file holds; a looser one, whose rounds leave
#   finished points out, is refused (exit 2) saying to run into another file with --reuse, which
#   then gives the file of a fresh run;
# - --shard and --select are refused (exit 2), saying what to do instead.
# Usage: run_refine_edit.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"
refining='  - method: meanfield
    policy: power_of_d
    policy_d: [2, 3]
    lambda: {linspace: [0.5, 0.99, 5]}
    refine: {axis: lambda, quantity: ET, crossing: 3.0, tolerance: TOL}'
other='  - method: meanfield
    policy: jsq
    lambda: [0.3, 0.4]'
sweep() {  # sweep NAME TOLERANCE [other]: a sweep of the refining block (and the other block)
  printf 'name: %s\nseed: 4\nblocks:\n%s\n' "$1" "${refining/TOL/$2}"
  [ "${3:-}" != other ] || printf '%s\n' "$other"
}
sweep alpha 1e-4 >alpha.yaml
sweep beta 1e-4 other >beta.yaml
mpi 2 "$QSWEEP" run alpha.yaml -o alpha.h5 --quiet 2>alpha.log || { cat alpha.log; fail "alpha"; }

# --- --reuse ------------------------------------------------------------------------------------
mpi 2 "$QSWEEP" run beta.yaml -o beta.h5 --quiet --reuse alpha.h5 2>beta.log ||
  { cat beta.log; fail "beta --reuse alpha.h5"; }
mpi 2 "$QSWEEP" run beta.yaml -o fresh-beta.h5 --quiet 2>/dev/null
$CHECK same beta.h5 fresh-beta.h5
"$PYTHON" - beta.h5 alpha.h5 <<'PY' || fail "rows reused"
import sys, h5py
with h5py.File(sys.argv[1], "r") as b, h5py.File(sys.argv[2], "r") as a:
    reused = [bool(r) for r in b["tasks/reused_from"][()]]
    method_jsq = [p == b"jsq" for p in b["meanfield/policy"][()]]
    # Every refined point is alpha's row; only beta's own block is computed.
    assert sum(reused) == len(a["tasks/key"]), (sum(reused), len(a["tasks/key"]))
    assert not any(r and j for r, j in zip(reused, method_jsq))
    assert len(set(b["tasks/round"][()])) > 5
print(f"beta reused {sum(reused)} rows of alpha over the rounds, computed {len(reused) - sum(reused)}")
PY
grep -q "finished rows reused from alpha.h5" beta.log || { cat beta.log; fail "no reuse said"; }

# --- an edited sweep that adds a block grows the file -------------------------------------------
cp alpha.h5 grown.h5
sweep alpha 1e-4 other >alpha-plus.yaml
mpi 2 "$QSWEEP" run alpha-plus.yaml -o grown.h5 --resume --quiet 2>grown.log ||
  { cat grown.log; fail "growing alpha with a block"; }
grep -q "grown from" grown.log || { cat grown.log; fail "grown.h5 did not grow"; }
"$QSWEEP" verify grown.h5 >/dev/null || fail "grown.h5 does not verify"
mpi 2 "$QSWEEP" run alpha-plus.yaml -o fresh-plus.h5 --quiet 2>/dev/null
$CHECK same grown.h5 fresh-plus.h5 --ignore-attempts

# --- a tighter tolerance goes on; a looser one is refused, and --reuse does it --------------------
cp alpha.h5 tighter.h5
sweep alpha 1e-6 >tighter.yaml
mpi 2 "$QSWEEP" run tighter.yaml -o tighter.h5 --resume --quiet 2>tighter.log ||
  { cat tighter.log; fail "a tighter tolerance"; }
mpi 2 "$QSWEEP" run tighter.yaml -o fresh-tighter.h5 --quiet 2>/dev/null
$CHECK same tighter.h5 fresh-tighter.h5 --ignore-attempts
cp alpha.h5 looser.h5
sweep alpha 1e-2 >looser.yaml
expect_exit 2 mpi 2 "$QSWEEP" run looser.yaml -o looser.h5 --resume --quiet 2>looser.log
grep -q "refine: looser.h5 holds refined points that the rounds of looser.yaml do not reach" \
  looser.log && grep -q "qsweep run looser.yaml -o NEW.h5 --reuse looser.h5" looser.log ||
  { cat looser.log; fail "the refusal of a looser tolerance"; }
$CHECK same looser.h5 alpha.h5  # untouched
mpi 2 "$QSWEEP" run looser.yaml -o new.h5 --reuse looser.h5 --quiet 2>new.log ||
  { cat new.log; fail "the advice"; }
mpi 2 "$QSWEEP" run looser.yaml -o fresh-looser.h5 --quiet 2>/dev/null
$CHECK same new.h5 fresh-looser.h5

# --- --shard and --select -----------------------------------------------------------------------
for part in "--shard 1/2" "--select policy_d=2"; do
  # shellcheck disable=SC2086
  expect_exit 2 "$QSWEEP" run alpha.yaml -o part.h5 $part --quiet 2>part.log
  grep -q "refine: each round is decided from the rows of every curve, so a refining sweep runs whole: run it without ${part%% *}" part.log &&
    grep -q -- "--reuse FILE" part.log || { cat part.log; fail "the refusal of $part"; }
  [ ! -e part.h5 ] || fail "$part wrote part.h5"
done
echo "PASS"
