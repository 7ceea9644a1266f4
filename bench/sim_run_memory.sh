#!/usr/bin/env bash
# Peak resident memory of `qsweep run` of one pooled simulation task (one rank), per server:
#   bench/sim_run_memory.sh [BUILD_DIR] [OTHER_BUILD_DIR] [REPEATS]
# for jsq and jiq on complete d = 2 and power_of_d (policy_d = 2) on complete d = 3, lambda 0.9,
# horizon 1, no warm-up, 2 replications: (median peak at N - median peak at N = 10) / N, for
# N = 1e5 and 1e6 (`/usr/bin/time -f %M`). With OTHER_BUILD_DIR the two builds alternate run by
# run (side by side). Memory does not depend on the load; it is printed anyway.
set -euo pipefail
builds=("$(realpath "${1:-build}/qsweep")")
if [ -n "${2:-}" ]; then builds+=("$(realpath "$2/qsweep")"); fi
repeats=${3:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
policies=("jsq d: 2" "jiq d: 2" "power_of_d d: 3, policy_d: 2")
echo "load at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
for entry in "${policies[@]}"; do
  policy=${entry%% *}
  for N in 10 100000 1000000; do
    cat >"$work/$policy-$N.yaml" <<YAML
name: one
seed: 1
blocks:
  - {method: simulate, family: complete, ${entry#* }, N: $N, lambda: 0.9, policy: $policy, horizon: 1, warmup: 0, replications: 2}
YAML
    for _ in $(seq "$repeats"); do
      for b in "${!builds[@]}"; do
        /usr/bin/time -o "$work/kib" -f %M "${builds[$b]}" run "$work/$policy-$N.yaml" \
          -o "$work/out.h5" --force --quiet >/dev/null
        echo "$b $policy $N $(tail -1 "$work/kib")" >>"$work/peaks"
      done
    done
  done
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$work/peaks" "${builds[@]}" <<'PY'
import statistics, sys
peaks = {}
for line in open(sys.argv[1]):
    b, policy, n, kib = line.split()
    peaks.setdefault((int(b), policy, int(n)), []).append(int(kib))
for b, path in enumerate(sys.argv[2:]):
    print(path)
    for policy in ("jsq", "jiq", "power_of_d"):
        base = statistics.median(peaks[(b, policy, 10)])
        cells = [f"N = {n:g}: {(statistics.median(peaks[(b, policy, n)]) - base) * 1024 / n:.1f} B"
                 for n in (100000, 1000000)]
        print(f"  {policy:<11} N = 10: {base / 1024:.1f} MiB; per server " + ", ".join(cells))
PY
