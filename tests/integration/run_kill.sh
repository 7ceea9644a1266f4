#!/usr/bin/env bash
# kill -9 of the whole job (mpirun and every rank) at random moments, several times, resuming
# after each kill: the file opens after every kill, the final file equals an uninterrupted run,
# and only the tasks in flight at each kill ran again (the attempts column shows it).
# Usage: run_kill.sh QSWEEP_BINARY SOURCE_DIR   (QSWEEP_KILL_SEED=N repeats a sequence of moments)
source "$(dirname "$0")/run_lib.bash" "$@"
sweep=$SOURCE_DIR/tests/integration/run_kill.yaml
RANDOM=${QSWEEP_KILL_SEED:-$$}
echo "kill moments from QSWEEP_KILL_SEED=${QSWEEP_KILL_SEED:-$$}"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# Start-up (MPI, plan, file creation) and the whole run, to place the kills.
cat >tiny.yaml <<'YAML'
name: tiny
blocks:
  - {method: exact, family: ring, N: 4, lambda: 0.5}
YAML
start=$(now_ms)
mpi 2 "$QSWEEP" run tiny.yaml -o tiny.h5 --quiet
startup_ms=$(($(now_ms) - start))
start=$(now_ms)
mpi 2 "$QSWEEP" run "$sweep" -o reference.h5 --quiet
reference_ms=$(($(now_ms) - start))
work_ms=$((reference_ms > startup_ms ? reference_ms - startup_ms : 100))
echo "start-up $startup_ms ms, uninterrupted run $reference_ms ms"

snapshots=()
kills=0
for attempt in 1 2 3 4 5 6 7 8; do
  resume=()
  if [ -e killed.h5 ]; then resume=(--resume); fi
  # The first kill comes during start-up (MPI, plan, file creation); the others from the end of
  # start-up to a third of the work into the run, so several kills hit tasks before the sweep is
  # complete.
  if [ "$attempt" -eq 1 ]; then
    delay_ms=$((startup_ms / 2 + RANDOM % (startup_ms / 2)))
  else
    delay_ms=$((startup_ms * 8 / 10 + RANDOM % (startup_ms / 5 + work_ms / 3)))
  fi
  delay=$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))
  start_job -n 2 --oversubscribe "$QSWEEP" run "$sweep" -o killed.h5 --quiet "${resume[@]}"
  sleep "$delay"
  if ! kill -0 "$JOB_PID" 2>/dev/null; then
    wait "$JOB_PID" || fail "run $attempt ended with an error before its kill"
    echo "run $attempt finished before its kill at ${delay}s"
    break
  fi
  kill_job
  kills=$((kills + 1))
  if [ -e killed.h5 ]; then
    $CHECK opens killed.h5 >/dev/null || fail "killed.h5 does not open after kill $kills"
    $CHECK snapshot killed.h5 "snapshot$kills.npz"
    snapshots+=("snapshot$kills.npz")
    echo "kill $kills at ${delay}s: the file opens"
  else
    echo "kill $kills at ${delay}s: before the file was complete (no killed.h5, only a .partial)"
  fi
  if [ "${#snapshots[@]}" -ge 4 ]; then break; fi
done
[ "${#snapshots[@]}" -ge 3 ] || fail "fewer than three kills hit a running sweep"
mpi 2 "$QSWEEP" run "$sweep" -o killed.h5 --resume --quiet
$CHECK resumed killed.h5 reference.h5 "${snapshots[@]}" --min-kills-in-flight 2
echo "PASS: $kills kills, resumed to the uninterrupted result"
