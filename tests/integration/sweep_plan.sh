#!/usr/bin/env bash
# `qsweep plan` and `qsweep validate` on valid sweeps: counts per method and family worked out
# by hand below, unstable tasks (lambda above the mean speed is unstable for every family),
# the biggest tasks, JSON output; every example sweep in sweeps/ validates.
# Usage: sweep_plan.sh QSWEEP_BINARY SOURCE_DIR
set -euo pipefail
qsweep=$(realpath "$1")
source_dir=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/count.yaml" <<'YAML'
name: count
blocks:
  - method: exact
    family: [ring, hetero_ring, complete]
    N: [4, 6]
    eps: [0.2, 0.4, 0.6]
    d: [2, 3]
    lambda: [0.3, 0.6, 1.2]
YAML
# ring: 2 N x 3 lambda = 6; hetero_ring: 2 x 3 eps x 3 = 18; complete: 2 x 2 d x 3 = 12.
"$qsweep" plan --json --top 3 "$work/count.yaml" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["tasks"] == 36, d["tasks"]
assert d["unstable_tasks"] == 12, d["unstable_tasks"]
groups = {(g["method"], g["kind"]): (g["tasks"], g["unstable_tasks"]) for g in d["groups"]}
assert groups == {("exact", "ring"): (6, 2), ("exact", "hetero_ring"): (18, 6),
                  ("exact", "complete"): (12, 4)}, groups
assert len(d["biggest"]) == 3
costs = [b["cost_seconds"] for b in d["biggest"]]
assert costs == sorted(costs, reverse=True) and costs[0] > 0
assert len(d["plan_hash"]) == 64 and len(d["sweep_sha256"]) == 64
'
# (Outputs are captured first: `grep -q` closing the pipe early would fail under pipefail.)
text=$("$qsweep" plan "$work/count.yaml")
grep -q '^total .* 36 .* 12 ' <<<"$text"
text=$("$qsweep" validate "$work/count.yaml")
grep -q 'valid, 36 tasks (12 outside the stability region)' <<<"$text"

# sweep_sha256 is the SHA-256 of the file as given.
expected_sha=$(sha256sum "$work/count.yaml" | cut -d' ' -f1)
text=$("$qsweep" plan --json "$work/count.yaml")
grep -q "\"sweep_sha256\": \"$expected_sha\"" <<<"$text"

# A refining block (docs/sweep-format.md, "Refinement"): its tasks are the initial grid (2 N x 5
# lambda = 10), the plan shows the spec and the budget (2 curves x 40 points = 80 tasks at most).
cat >"$work/refine.yaml" <<'YAML'
name: refine
output: refine.h5
blocks:
  - method: exact
    family: ring
    N: [4, 6]
    lambda: {linspace: [0.05, 0.95, 5]}
    refine: {axis: lambda, quantity: ET, tolerance: 0.005, max_points: 40}
  - method: meanfield
    policy: power_of_d
    policy_d: 2
    lambda: [0.5, 0.99]
    refine: {axis: lambda, quantity: ET, crossing: 5, tolerance: 1e-6}
YAML
"$qsweep" plan --json "$work/refine.yaml" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["tasks"] == 12, d["tasks"]
r = d["refinements"]
assert [x["block"] for x in r] == [0, 1], r
assert r[0] == {"block": 0, "axis": "lambda", "quantity": "ET", "criterion": "interpolation",
                "tolerance": 0.005, "integer_axis": False, "curves": 2, "initial_points": 5,
                "max_points": 40, "max_tasks": 80}, r[0]
assert r[1]["criterion"] == "crossing" and r[1]["crossing"] == 5.0 and r[1]["tolerance"] == 1e-6
assert r[1]["curves"] == 1 and r[1]["initial_points"] == 2 and r[1]["max_points"] == 100, r[1]
'
text=$("$qsweep" plan "$work/refine.yaml")
grep -q '^  block 0: ET over lambda, .* 2 curves of 5 initial points, at most 40 points each (max_points): at most 80 tasks$' <<<"$text"
grep -q '^  block 1: ET over lambda, where ET crosses 5, bracketed to 1e-06 in lambda; 1 curve of 2 initial points' <<<"$text"
text=$("$qsweep" validate "$work/refine.yaml")
grep -q 'valid, 12 tasks (0 outside the stability region; 2 refining blocks, at most 180 tasks after refinement)' <<<"$text"
# `run` runs the rounds (tests/integration/run_refine.sh checks them on several ranks): the file
# holds more than the initial tasks, every row finished, and it verifies.
(cd "$work" && "$qsweep" run -q refine.yaml >"$work/run.out" 2>"$work/run.err") ||
  { echo "run of a refining sweep failed"; cat "$work/run.err"; exit 1; }
"$qsweep" verify "$work/refine.h5" >/dev/null
"$qsweep" status "$work/refine.h5" >"$work/status.txt"
grep -qE '^all +[0-9]+ +[0-9]+ +0 +0 +0$' "$work/status.txt" || { cat "$work/status.txt"; exit 1; }
[[ $(awk '$1 == "all" {print $2}' "$work/status.txt") -gt 10 ]] || { cat "$work/status.txt"; exit 1; }

for sweep in "$source_dir"/sweeps/*.yaml; do
  "$qsweep" validate "$sweep" >/dev/null
  "$qsweep" plan "$sweep" >/dev/null
done
echo "plan checks passed"
