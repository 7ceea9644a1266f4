# Shared by tests/integration/run_lock.sh and tests/multihost/lock.sh (sourced after run_lib.bash;
# not a test itself): two runs A and B on out.h5 started at a random offset, with random flags.

flags_of() {  # a random mode: plain, --resume or --force
  case $((RANDOM % 3)) in
    0) echo "" ;;
    1) echo "--resume" ;;
    2) echo "--force" ;;
  esac
}

# check_pair PAIR A_RC B_RC A_FLAGS B_FLAGS: never two writers (two plain runs: exactly one is
# refused; a refused run says why), and out.h5 ends complete, verified and equal to reference.h5,
# with no lock or .partial left behind. Counts in `refusals` the refusals that named a holder.
check_pair() {
  local pair=$1 a_rc=$2 b_rc=$3 a_flags=$4 b_flags=$5 run rc
  for run in a b; do
    if [ "$run" = a ]; then rc=$a_rc; else rc=$b_rc; fi
    [ "$rc" -eq 0 ] || [ "$rc" -eq 2 ] || { cat "$run.log"; fail "pair $pair: run $run exited with $rc"; }
    if [ "$rc" -eq 2 ]; then
      grep -qE "is being written by another run|already exists" "$run.log" ||
        { cat "$run.log"; fail "pair $pair: run $run was refused without a reason"; }
      if grep -q "is being written by another run" "$run.log"; then refusals=$((refusals + 1)); fi
    fi
  done
  if [ -z "$a_flags" ] && [ -z "$b_flags" ]; then
    [ $((a_rc + b_rc)) -eq 2 ] || fail "pair $pair: two plain runs exited with $a_rc and $b_rc (one must be refused)"
  fi
  [ $((a_rc * b_rc)) -eq 0 ] || fail "pair $pair: both runs were refused"
  expect_exit 0 "$QSWEEP" verify out.h5 >/dev/null
  expect_exit 0 "$QSWEEP" status out.h5 >/dev/null
  $CHECK same out.h5 reference.h5 --ignore-attempts >/dev/null
  if [ -e out.h5.lock ] || [ -e out.h5.partial ]; then fail "pair $pair left a lock or .partial file"; fi
}
refusals=0
