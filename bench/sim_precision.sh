#!/usr/bin/env bash
# CPU seconds of `qsweep eval --method simulate` to a 1% relative half-width on E[T]
# (target_rel_half_width 0.01, every other setting at its default), two builds side by side:
#   bench/sim_precision.sh OLD_BUILD_DIR NEW_BUILD_DIR [REPEATS] [LOADS]
# Systems: redundancy_coc on ring N = 10, power_of_d (policy_d 2) on complete N = 1000 d = 2;
# LOADS (default "0.9 0.99") is lambda. The builds alternate run by run (the machine is shared
# and noisy: compare the two in one run). Prints, per run: build, system, load, CPU seconds
# (user + system), E[T] +- half-width, events and the warning (empty: trusted and precise).
set -euo pipefail
old=$(realpath "$1/qsweep")
new=$(realpath "$2/qsweep")
repeats=${3:-1}
loads=${4:-0.9 0.99}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
systems=("ring10|--family ring --N 10 --policy redundancy_coc"
  "pod2_1000|--family complete --N 1000 --d 2 --policy power_of_d --policy_d 2")
echo "load at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| build | system | lambda | CPU s | E[T] | hw | events | warning |\n|---|---|---|---|---|---|---|---|\n'
for load in $loads; do
  for entry in "${systems[@]}"; do
    name=${entry%%|*}
    read -r -a flags <<<"${entry#*|}"
    for _ in $(seq "$repeats"); do
      for build in old new; do
        binary=$old
        [ "$build" = new ] && binary=$new
        /usr/bin/time -o "$work/cpu" -f '%U %S' "$binary" eval --method simulate --seed 1 \
          "${flags[@]}" --lambda "$load" --target_rel_half_width 0.01 --json >"$work/out.json"
        cpu=$(awk '{printf "%.3g", $1 + $2}' "$work/cpu")
        python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print("| {} | {} | {} | {} | {:.5g} | {:.3g} | {:.3g} | {} |".format(*sys.argv[2:], r["ET"],
      r["ET_hw"], r["events"], r["warning"]))' "$work/out.json" "$build" "$name" "$load" "$cpu"
      done
    done
  done
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
