#!/usr/bin/env bash
# kill -9 across namespace hosts, resuming after each: a job of 3 ranks on 3 hosts (one each) is
# killed once a held task has started (QSWEEP_TEST_HOLD: the kill certainly catches it in
# flight), in the ways a cluster loses a job:
#   1. the whole job at once (the launcher and every process under it, on every host);
#   2. a host that is not rank 0's dies (every process on it): the rest of the job must end by
#      itself;
#   3. rank 0's host dies, the launcher with it: the ranks on the other hosts must end by
#      themselves;
#   4. the whole job again, launched from another host (rank 0 on host 2).
# After each kill the file opens and the held task is not done; the final resume (from host 3)
# equals an uninterrupted run, and only the tasks in flight at each kill ran again.
# Usage: kill.sh QSWEEP_BINARY SOURCE_DIR   (QSWEEP_KILL_SEED=N repeats a choice of tasks)
source "$(dirname "$0")/multihost_lib.bash" "$@"
sweep=$SOURCE_DIR/tests/integration/run_kill.yaml
RANDOM=${QSWEEP_KILL_SEED:-$$}
echo "held tasks from QSWEEP_KILL_SEED=${QSWEEP_KILL_SEED:-$$}"
hosts_up 3

use_hosts none
mpi 2 "$QSWEEP" run "$sweep" -o reference.h5 --quiet
read -ra unfinished <<<"$(task_ids reference.h5)"

# kill_host N: kill -9 of every process on host N (as when the node dies).
kill_host() {
  # shellcheck disable=SC2046  # one pid per word
  kill -9 $(host_pids "$1") 2>/dev/null || true
}

# Waits until the job under launcher JOB_PID has ended by itself (bounded), with no process of it
# left on any host.
wait_job_gone() {
  local n deadline=$((SECONDS + HOLD_TIMEOUT))
  while kill -0 "$JOB_PID" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || fail "the job did not end within $HOLD_TIMEOUT s after $1"
    sleep 0.05
  done
  wait "$JOB_PID" 2>/dev/null || true
  for ((n = 1; n <= MULTIHOST_COUNT; n++)); do wait_host_empty "$n"; done
}

snapshots=()
kills=0
for way in whole-job host-3 host-1 whole-job-from-host-2; do
  spec=1:1,2:1,3:1
  if [ "$way" = whole-job-from-host-2 ]; then spec=2:1,3:1,1:1; fi
  use_hosts "$spec"
  # Three tasks not done yet, at random: the first of them handed out holds its rank's batch.
  held=()
  for _ in 1 2 3; do held+=("${unfinished[RANDOM % ${#unfinished[@]}]}"); done
  hold_tasks hold "${held[@]}"
  start_job -n 3 --oversubscribe "$QSWEEP" run "$sweep" -o killed.h5 --quiet --resume 2>resume.log
  wait_started "$JOB_PID"
  check_job_across_hosts "$JOB_PID" "$spec"
  case $way in
    whole-job*)
      kill_job
      wait_job_gone "the kill"
      ;;
    host-3)
      kill_host 3
      wait_job_gone "host 3 died"
      ;;
    host-1)
      kill_host 1
      # The launcher died with host 1: nothing reports its end but the processes' disappearance.
      for n in 2 3; do wait_host_empty "$n"; done
      wait "$JOB_PID" 2>/dev/null || true
      ;;
  esac
  kills=$((kills + 1))
  grep -v "does not exist yet: starting it" resume.log | tail -n 5 || true
  $CHECK opens killed.h5 >/dev/null || fail "killed.h5 does not open after kill $kills ($way)"
  $CHECK snapshot killed.h5 "snapshot$kills.npz"
  snapshots+=("snapshot$kills.npz")
  read -ra unfinished <<<"$(unfinished_ids killed.h5)"
  [[ " ${unfinished[*]} " == *" $STARTED_TASK "* ]] || fail "held task $STARTED_TASK is done after kill $kills"
  echo "kill $kills ($way) once task $STARTED_TASK (held: ${held[*]}) started: the file opens," \
    "${#unfinished[@]} tasks not done"
done
no_hold
use_hosts 3:1,1:1,2:1
mpi 3 "$QSWEEP" run "$sweep" -o killed.h5 --resume --quiet
$CHECK resumed killed.h5 reference.h5 "${snapshots[@]}" --min-kills-in-flight "${#snapshots[@]}"
echo "PASS: $kills kills across hosts (whole job, a host, rank 0's host), resumed to the uninterrupted result"
