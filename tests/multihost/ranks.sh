#!/usr/bin/env bash
# The mixed sweep of tests/integration/run_ranks.sh on several namespace hosts (TCP between them,
# the results file on the shared file system): 2 ranks on 2 hosts, 3 on 3, 4 on 2 hosts (2 each),
# 3 with a dedicated coordinator launched from another host; each file equals a 1-rank run on one
# host (timing and rank columns aside), every rank ran tasks, the file names rank 0's host, and
# status reads the same. Each placement is first checked with a probe job.
# Usage: ranks.sh QSWEEP_BINARY SOURCE_DIR
source "$(dirname "$0")/multihost_lib.bash" "$@"
sweep=$SOURCE_DIR/tests/integration/run_mixed.yaml
hosts_up 3

use_hosts none
mpi 1 "$QSWEEP" run "$sweep" -o one-host.h5 --quiet
# status from its table on (the provenance lines above it name the run).
tasks_status() { "$QSWEEP" status "$1" | sed '1,/^$/d'; }
tasks_status one-host.h5 >one-host.status

# name: placement (rank 0's host first), ranks, extra options
layouts=(
  "two-hosts 1:1,2:1"
  "three-hosts 1:1,2:1,3:1"
  "two-by-two 1:2,2:2"
  "dedicated 2:1,3:1,1:1 --dedicated-coordinator"
)
for layout in "${layouts[@]}"; do
  read -r name spec options <<<"$layout"
  expect_placement "$spec"
  ranks=$(( $(echo "${spec//,/ }" | tr ' ' '\n' | cut -d: -f2 | paste -sd+) ))
  use_hosts "$spec"
  # shellcheck disable=SC2086  # options are words
  mpi "$ranks" "$QSWEEP" run "$sweep" -o "$name.h5" --quiet $options
  $CHECK same one-host.h5 "$name.h5"
  tasks_status "$name.h5" >"$name.status"
  diff one-host.status "$name.status" || fail "$name: status differs from the one-host run's"
  rank0_host=$(host_name "${spec%%:*}")
  "$PYTHON" - "$name.h5" "$ranks" "$rank0_host" "$options" <<'PY' || fail "$name: ranks or host"
import sys, h5py
path, ranks, host, options = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
with h5py.File(path, "r") as f:
    ran = set(f["tasks/rank"][()].tolist())
    workers = set(range(1, ranks)) if "--dedicated-coordinator" in options else set(range(ranks))
    assert ran == workers, f"tasks ran on ranks {sorted(ran)}, expected {sorted(workers)}"
    assert int(f.attrs["mpi_ranks"]) == ranks, f"mpi_ranks {f.attrs['mpi_ranks']}"
    stored = f.attrs["hostname"]
    stored = stored.decode() if isinstance(stored, bytes) else str(stored)
    assert stored == host, f"hostname attribute {stored!r}, expected rank 0's host {host!r}"
PY
  echo "$name ($spec${options:+, $options}): identical to one host"
done
echo "PASS: identical results on 1 host and across 2 and 3 namespace hosts"
