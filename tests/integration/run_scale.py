#!/usr/bin/python3
"""Runs a sweep under mpirun and samples the resident memory of every rank at two moments.

  run_scale.py RANKS MAX_GROWTH_BYTES_PER_TASK -- QSWEEP run SWEEP -o OUT ...

The moments are events, not times: tasks HOLD_EARLY and HOLD_LATE are held by the testing hook
QSWEEP_TEST_HOLD (docs/running.md, "Testing hooks"); when each starts, the ranks' memory and the
number of finished tasks in OUT are sampled, then the task is released. The tasks of
run_scale.yaml all cost the same, so the scheduler hands them out in task order and about
HOLD_LATE - HOLD_EARLY tasks finish between the two samples. Between them the resident memory of
each rank may grow by at most MAX_GROWTH_BYTES_PER_TASK x the tasks finished in between (plus one
page per rank), i.e. memory does not grow with the number of finished tasks. Exits non-zero
otherwise.
"""
import os
import select
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from qsweep_results.launch import mpi_launch  # noqa: E402

def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def ranks_of(launcher_pid):
    """The processes under the launcher that have none under them: the ranks (Open MPI's mpirun
    starts them itself, MPICH's mpiexec through a hydra_pmi_proxy)."""
    ranks, todo = [], children(launcher_pid)
    while todo:
        pid = todo.pop()
        below = children(pid)
        if below:
            todo += below
        else:
            ranks.append(pid)
    return ranks


HOLD_EARLY, HOLD_LATE = 20000, 90000
TIMEOUT = 300  # seconds for a held task to start: only a hung run takes that long


def finished_tasks(path):
    with h5py.File(path, "r", locking=False) as f:  # while the run writes it (as qsweep status)
        return int(np.count_nonzero(f["tasks/status"][()] != 0))


def main():
    ranks, max_per_task = int(sys.argv[1]), float(sys.argv[2])
    command = sys.argv[sys.argv.index("--") + 1:]
    output = command[command.index("-o") + 1]
    hold = tempfile.mkdtemp(prefix="qsweep-scale-hold.")
    started, release = os.path.join(hold, "started"), os.path.join(hold, "release")
    os.mkfifo(started)
    os.mkfifo(release)
    announcements = os.open(started, os.O_RDWR)  # never sees end of file
    env = dict(os.environ, QSWEEP_TEST_HOLD=f"{hold}:{HOLD_EARLY},{HOLD_LATE}")
    job = subprocess.Popen(mpi_launch(ranks) + command, env=env)
    samples = []  # (finished, {pid: rss KiB})
    try:
        for _ in (HOLD_EARLY, HOLD_LATE):
            ready, _, _ = select.select([announcements], [], [], TIMEOUT)
            if not ready:
                sys.exit(f"run_scale: no held task started within {TIMEOUT} s")
            task = os.read(announcements, 64).decode().strip()
            rss = {pid: rss_kib(pid) for pid in ranks_of(job.pid)}
            samples.append((finished_tasks(output), {p: r for p, r in rss.items() if r}))
            print(f"task {task} held: {samples[-1][0]} tasks finished, RSS MiB " +
                  " ".join(f"{r / 1024:.1f}" for r in samples[-1][1].values()), flush=True)
            with open(release, "w"):
                pass
        if job.wait(timeout=TIMEOUT * 10) != 0:
            sys.exit(f"run_scale: mpirun exited with {job.returncode}")
    finally:
        if job.poll() is None:
            job.kill()
        shutil.rmtree(hold, ignore_errors=True)
    (first, before_rss), (last, after_rss) = samples
    tasks = last - first
    if len(before_rss) != ranks or len(after_rss) != ranks or tasks < (HOLD_LATE - HOLD_EARLY) // 2:
        sys.exit(f"run_scale: samples of {len(before_rss)} and {len(after_rss)} ranks with {tasks} "
                 "tasks between them: the tasks were not handed out in task order")
    worst = 0.0
    for pid, before in before_rss.items():
        after = after_rss.get(pid, before)
        growth = (after - before) * 1024.0
        worst = max(worst, growth / tasks)
        print(f"rank pid {pid}: {before / 1024:.1f} -> {after / 1024:.1f} MiB over {tasks} tasks "
              f"({growth / tasks:+.2f} bytes per task)")
        if growth > max_per_task * tasks + 4096:
            sys.exit(f"run_scale: rank pid {pid} grew by {growth / tasks:.1f} bytes per finished "
                     f"task (limit {max_per_task})")
    print(f"run_scale: memory growth at most {worst:.2f} bytes per finished task")


if __name__ == "__main__":
    main()
