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

for sweep in "$source_dir"/sweeps/*.yaml; do
  "$qsweep" validate "$sweep" >/dev/null
  "$qsweep" plan "$sweep" >/dev/null
done
echo "plan checks passed"
