#!/usr/bin/python3
"""Runs a sweep under mpirun and samples the resident memory of its ranks until the job ends.

  run_memory.py RANKS -- QSWEEP run SWEEP -o OUT ...

Samples VmRSS of every rank (/proc/PID/status) in rounds, one round after another, from when
the ranks exist until the launcher exits: the end is an event, not a time. Prints one line
"peak_sum_bytes ROUNDS PEAK" with the largest sum over the ranks of one round, and exits with
the job's exit code.
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from qsweep_results.launch import mpi_launch  # noqa: E402
from run_scale import ranks_of, rss_kib  # noqa: E402


def main():
    ranks = int(sys.argv[1])
    command = sys.argv[sys.argv.index("--") + 1:]
    job = subprocess.Popen(mpi_launch(ranks) + command)
    pids, rounds, peak = [], 0, 0
    while job.poll() is None:
        if len(pids) < ranks:
            pids = ranks_of(job.pid)
        total = 0
        for pid in pids:
            kib = rss_kib(pid)
            total += 1024 * kib if kib is not None else 0
        if len(pids) == ranks:
            rounds += 1
            peak = max(peak, total)
        time.sleep(0.002)  # a pause between rounds, not a deadline: the end is the job's exit
    print(f"peak_sum_bytes {rounds} {peak}")
    sys.exit(job.returncode)


if __name__ == "__main__":
    main()
