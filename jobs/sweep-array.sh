#!/bin/bash
# One study over a SLURM job array: K array elements each run one cost-balanced shard of the
# plan (`qsweep run SWEEP --shard I/K`) into a file of its own, OUT.part-I.h5, and a job that
# depends on all of them merges the parts into OUT (`qsweep merge`): the same file as one run of
# the whole sweep. Run it where you submit jobs (a login node), from the repository root or with
# QSWEEP_DIR set:
#
#   bash jobs/sweep-array.sh sweeps/my-study.yaml results/my-study.h5 8 [sbatch options ...]
#
# The sbatch options (--ntasks=4, --time=04:00:00, --partition=...) apply to each array element;
# the #SBATCH lines of jobs/sweep-array.sbatch are the defaults. An element stopped by its
# walltime leaves its part to continue: submit the same command again (the elements run with
# --resume, so finished tasks stay finished; the merge waits for all). See docs/cluster.md.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: bash jobs/sweep-array.sh SWEEP OUT K [sbatch options]" >&2
  exit 2
fi
sweep=$1 out=$2 parts=$3
shift 3
case $parts in
  '' | *[!0-9]*) echo "sweep-array.sh: K must be a number of parts, not '$parts'" >&2; exit 2 ;;
esac
if [ "$parts" -lt 1 ]; then echo "sweep-array.sh: K must be at least 1" >&2; exit 2; fi
export QSWEEP_DIR=${QSWEEP_DIR:-$PWD}
[ -f "$QSWEEP_DIR/jobs/sweep-array.sbatch" ] || {
  echo "sweep-array.sh: $QSWEEP_DIR/jobs/sweep-array.sbatch not found: set QSWEEP_DIR" >&2
  exit 2
}
array=$(sbatch --parsable --array="1-$parts" "$@" "$QSWEEP_DIR/jobs/sweep-array.sbatch" \
  "$sweep" "$out")
array=${array%%;*}  # "id;cluster" on a federation
merge=$(sbatch --parsable --dependency="afterok:$array" --ntasks=1 --job-name=qsweep-merge \
  --output="qsweep-merge-%j.out" --wrap "bash '$QSWEEP_DIR/jobs/sweep-array.sbatch' --merge '$out' $parts")
merge=${merge%%;*}
echo "array job $array ($parts parts of $sweep), merge job $merge (into $out once all succeed)"
