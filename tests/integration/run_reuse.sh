#!/usr/bin/env bash
# Reuse across studies (docs/running.md, "Reusing another study's results"): qsweep run --reuse
# OTHER.h5 copies the verified finished rows of another study whose keys the plan has, instead of
# computing them.
# - study beta (3 ranks) reusing study alpha: exactly the shared tasks (same parameters and seed:
#   one exact, one simulate, one ldp) are copied, every result column bitwise as in alpha (with
#   alpha's timings, so they did not run again) and /tasks/reused_from naming alpha's file and
#   study; the others are computed here (reused_from empty); the file verifies and equals a run
#   of beta without --reuse (reused_from and timings aside);
# - --resume of a part of beta (--select) with --reuse: the shared tasks are copied, the part's
#   rows kept, the rest computed;
# - the same sweep under another seed shares no key: nothing is copied, and said so;
# - a source with a damaged row, a source whose stored plan another qsweep version expands
#   differently, and the output itself are refused in one line (exit 2, nothing written).
# Usage: run_reuse.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/run_lib.bash" "$@"

exact_block() {  # lambda values
  cat <<YAML
  - method: exact
    family: ring
    N: 4
    lambda: [$1]
    qmax: 8
YAML
}
simulate_block() {  # lambda values
  cat <<YAML
  - method: simulate
    policy: jsq
    family: complete
    d: 2
    N: 4
    lambda: [$1]
    horizon: 300
    warmup: 30
    replications: 2
    qmax: 8
YAML
}
ldp_block() {  # lambda values
  cat <<YAML
  - method: ldp
    policy: jsq
    estimator: monte_carlo
    n: 4
    j: 2
    T: 1
    lambda: [$1]
    samples: 200
YAML
}
study() {  # name seed exact-lambdas simulate-lambdas ldp-lambdas
  printf 'name: %s\nseed: %s\nblocks:\n' "$1" "$2"
  exact_block "$3"
  simulate_block "$4"
  ldp_block "$5"
}
study alpha 11 "0.3, 0.6" "0.5, 0.8" "0.9" >alpha.yaml
study beta 11 "0.45, 0.6" "0.65, 0.8" "0.9, 0.8" >beta.yaml  # shares exact 0.6, simulate 0.8, ldp 0.9
study alpha 12 "0.3, 0.6" "0.5, 0.8" "0.9" >reseeded.yaml

mpi 2 "$QSWEEP" run alpha.yaml -o alpha.h5 --quiet
mpi 3 "$QSWEEP" run beta.yaml -o beta.h5 --reuse alpha.h5 --quiet 2>beta.txt ||
  fail "run --reuse: $(cat beta.txt)"
grep -q "^qsweep: 3 finished rows reused from alpha.h5$" beta.txt || fail "$(cat beta.txt)"
"$PYTHON" - alpha.h5 beta.h5 <<'PY' || fail "not exactly the shared tasks copied, bitwise"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1]) as a, h5py.File(sys.argv[2]) as b:
    ka, kb = list(a["tasks/key"][()]), list(b["tasks/key"][()])
    shared = set(ka) & set(kb)
    assert len(shared) == 3, len(shared)
    reused = b["tasks/reused_from"].asstr()[()]
    for t, key in enumerate(kb):
        if key in shared:
            assert reused[t].startswith("alpha.h5 (study 'alpha', created "), reused[t]
        else:  # computed here, in this run
            assert reused[t] == "" and b["tasks/attempts"][t] == 1, (t, reused[t])
            assert b["tasks/status"][t] == 1, t
    # Every column of a copied row is alpha's, bitwise: results, warnings, timings, rank.
    for group in ("tasks", "exact", "simulate", "ldp"):
        ida = a["tasks/id"][()] if group == "tasks" else a[group + "/task_id"][()]
        idb = b["tasks/id"][()] if group == "tasks" else b[group + "/task_id"][()]
        row_a = {ka[t]: r for r, t in enumerate(ida)}
        names = [n for n in b[group] if not h5py.h5ds.is_scale(b[group][n].id)]
        compared = 0
        for r, t in enumerate(idb):
            if kb[t] not in shared:
                continue
            ra = row_a[kb[t]]
            for name in names:
                if name in ("id", "task_id", "block", "checksum", "reused_from") or \
                        name.endswith("_offset"):
                    continue  # the row's place, its seal (which covers reused_from)
                d, e = a[group][name], b[group][name]
                if name + "_offset" in names:
                    oa, ob = a[group][name + "_offset"][ra], b[group][name + "_offset"][r]
                    ca, cb = a[group][name + "_count"][ra], b[group][name + "_count"][r]
                    va, vb = d[oa:oa + ca], e[ob:ob + cb]
                else:
                    va, vb = np.asarray(d[ra]), np.asarray(e[r])
                    if d.ndim == 2:  # distributions: the wider group pads with NaN
                        n = min(va.shape[0], vb.shape[0])
                        assert np.isnan(va[n:]).all() and np.isnan(vb[n:]).all(), (group, name)
                        va, vb = va[:n], vb[:n]
                assert va.tobytes() == vb.tobytes(), (group, name, int(t))
                compared += 1
        assert compared > 0, group
PY
"$QSWEEP" verify beta.h5 >/dev/null || fail "the file with reused rows does not verify"
mpi 2 "$QSWEEP" run beta.yaml -o beta-alone.h5 --quiet
$CHECK same beta.h5 beta-alone.h5  # reused_from and timings aside

# --resume of a part with --reuse: the part's rows kept, the shared tasks copied, the rest run.
mpi 2 "$QSWEEP" run beta.yaml -o part.h5 --select block=0 --quiet 2>/dev/null
mpi 3 "$QSWEEP" run beta.yaml -o part.h5 --resume --reuse alpha.h5 --quiet 2>part.txt ||
  fail "resume --reuse: $(cat part.txt)"
grep -q "^qsweep: 2 finished rows reused from alpha.h5$" part.txt || fail "$(cat part.txt)"
grep -q "part.h5 rewritten with the rows of --reuse (2 finished rows kept)" part.txt ||
  fail "$(cat part.txt)"
"$PYTHON" - part.h5 <<'PY' || fail "--resume --reuse: not the part kept, the shared copied"
import sys, h5py
with h5py.File(sys.argv[1]) as f:
    reused = list(f["tasks/reused_from"].asstr()[()])
    blocks = f["tasks/block"][()]
    assert (f["tasks/status"][()] == 1).all()
    # block 0 (exact 0.45, 0.6) ran in the part: kept, although alpha has 0.6 too
    assert [r == "" for r, b in zip(reused, blocks) if b == 0] == [True, True], reused
    assert sum(r != "" for r in reused) == 2, reused  # simulate 0.8, ldp 0.9
PY
$CHECK same part.h5 beta-alone.h5

# Another seed: no shared key, nothing copied, said so; the run computes everything.
mpi 2 "$QSWEEP" run reseeded.yaml -o reseeded.h5 --reuse alpha.h5 --quiet 2>reseeded.txt ||
  fail "$(cat reseeded.txt)"
grep -q "^qsweep: 0 finished rows reused from alpha.h5 (none of its finished tasks has a key of this plan: keys include the seed" reseeded.txt ||
  fail "$(cat reseeded.txt)"
"$PYTHON" -c "import h5py, sys; f = h5py.File('reseeded.h5'); sys.exit(any(f['tasks/reused_from'][()]))" ||
  fail "a row of another seed was copied"

# Refusals, one line each, exit 2, nothing written.
refused() {  # pattern source...
  local pattern=$1
  shift
  local args=()
  for source in "$@"; do args+=(--reuse "$source"); done
  expect_exit 2 mpi 2 "$QSWEEP" run beta.yaml -o refused.h5 "${args[@]}" --quiet 2>refused.txt
  # mpirun adds its own lines about the exit code
  [ "$(grep -c "^qsweep" refused.txt)" -eq 1 ] || fail "not one line: $(cat refused.txt)"
  grep -q "$pattern" refused.txt || fail "expected '$pattern': $(cat refused.txt)"
  [ ! -e refused.h5 ] || fail "a refused run wrote refused.h5"
}
cp alpha.h5 damaged.h5
"$PYTHON" - damaged.h5 <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    f["simulate/ET"][0] = f["simulate/ET"][0] * 1.5  # a result changed under its checksum
PY
refused "^qsweep: error: --reuse damaged.h5: 1 rows fail verification (the first: task [0-9]*: .*); a file to reuse must verify" damaged.h5
cp alpha.h5 foreign.h5
"$PYTHON" - foreign.h5 <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:  # as a qsweep whose methods give other numbers sees it
    f.attrs["plan_hash"] = "0" * 64
PY
refused "^qsweep: error: --reuse foreign.h5: the sweep file stored in it expands to plan hash" alpha.h5 foreign.h5
refused "^qsweep: error: --reuse .*missing.h5" missing.h5
expect_exit 2 mpi 2 "$QSWEEP" run beta.yaml -o beta.h5 --resume --reuse beta.h5 --quiet 2>self.txt
grep -q "^qsweep: error: --reuse beta.h5 is the results file of this run; --resume continues it$" self.txt ||
  fail "$(cat self.txt)"
echo "PASS: --reuse copies exactly the tasks another study shares, bitwise, and says where from"
