#!/usr/bin/python3
"""Runs a sweep under mpirun and samples the resident memory of every rank at many moments.

  run_scale.py RANKS MAX_GROWTH_BYTES_PER_TASK -- QSWEEP run SWEEP -o OUT ...

The moments are events, not times: every HOLD_EVERY-th task is held by the testing hook
QSWEEP_TEST_HOLD (docs/running.md, "Testing hooks"); when one starts, the ranks' memory and the
number of finished tasks in OUT are sampled, then the task is released. The tasks of
run_scale.yaml all cost the same, so the scheduler hands them out in about task order.

A single sample is not a rank's kept memory: a rank caught writing a batch holds its buffers for
a moment, and the resident size swings by 1-2 MiB around a steady floor. So each rank's floor (its
smallest sample) is taken in an early window of samples and in a late one. From the early floor to
the late floor a rank may grow by at most MAX_GROWTH_BYTES_PER_TASK x the tasks finished between
the two samples (plus one page), i.e. memory does not grow with the number of finished tasks.
A leak of B bytes per task raises every late sample, so it raises the late floor. Exits non-zero
otherwise.
"""
import errno
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


HOLD_EVERY = 5000
HOLDS = list(range(HOLD_EVERY, 100000, HOLD_EVERY))
# The first sample is left out (the ranks are still warming up); each window has 6 samples.
EARLY, LATE = HOLDS[1:7], HOLDS[-6:]
TIMEOUT = 300  # seconds for a held task to start: only a hung run takes that long


def finished_tasks(path):
    with h5py.File(path, "r", locking=False) as f:  # while the run writes it (as qsweep status)
        return int(np.count_nonzero(f["tasks/status"][()] != 0))


def release_held(release, ended):
    """Lets go the held tasks waiting now: opens the release pipe for writing once a held task has
    it open for reading, and closes it (the task reads to its end). Returns without releasing
    anything if the job ends first. Two held tasks may wait at once, on different ranks: one
    release lets both go, and the next call then waits for the next held task instead."""
    while True:
        try:
            os.close(os.open(release, os.O_WRONLY | os.O_NONBLOCK))
            return
        except OSError as error:
            if error.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise
        if select.select([ended], [], [], 0.01)[0]:
            return


def main():
    ranks, max_per_task = int(sys.argv[1]), float(sys.argv[2])
    command = sys.argv[sys.argv.index("--") + 1:]
    output = command[command.index("-o") + 1]
    hold = tempfile.mkdtemp(prefix="qsweep-scale-hold.")
    started, release = os.path.join(hold, "started"), os.path.join(hold, "release")
    os.mkfifo(started)
    os.mkfifo(release)
    announcements = os.open(started, os.O_RDWR)  # never sees end of file
    env = dict(os.environ, QSWEEP_TEST_HOLD=f"{hold}:" + ",".join(map(str, HOLDS)))
    job = subprocess.Popen(mpi_launch(ranks) + command, env=env)
    ended = os.pidfd_open(job.pid)  # readable once mpirun ends: no waiting for a run that died
    samples = {}  # held task -> (finished, {pid: rss KiB})
    announced = []  # held tasks announced and not sampled yet
    heard = 0  # announcements read
    try:
        while heard < len(HOLDS) or announced:
            if not announced:
                ready, _, _ = select.select([announcements, ended], [], [], TIMEOUT)
                if announcements not in ready:
                    sys.exit(f"run_scale: mpirun ended with {job.wait()} before every held task "
                             "ran" if ready else f"run_scale: no held task started within {TIMEOUT} s")
                # Each announcement is one write of a line; several may wait in the pipe.
                announced += [int(line) for line in os.read(announcements, 4096).split()]
                heard += len(announced)
            task = announced.pop(0)
            rss = {p: r for p, r in ((p, rss_kib(p)) for p in ranks_of(job.pid)) if r}
            if len(rss) < ranks:  # released with an earlier one, and the run has ended since
                continue
            samples[task] = (finished_tasks(output), rss)
            print(f"task {task} held: {samples[task][0]} tasks finished, RSS MiB " +
                  " ".join(f"{r / 1024:.1f}" for r in samples[task][1].values()), flush=True)
            release_held(release, ended)
        if job.wait(timeout=TIMEOUT * 10) != 0:
            sys.exit(f"run_scale: mpirun exited with {job.returncode}")
    finally:
        if job.poll() is None:
            job.kill()
        shutil.rmtree(hold, ignore_errors=True)
    pids = set(next(iter(samples.values()))[1])
    if len(pids) != ranks or any(set(rss) != pids for _, rss in samples.values()):
        sys.exit(f"run_scale: not every sample has the same {ranks} ranks")
    for window in (EARLY, LATE):
        if sum(task in samples for task in window) < 4:
            sys.exit(f"run_scale: fewer than 4 samples among held tasks {window}")

    def floor(pid, window):  # (smallest resident KiB, tasks finished when it was sampled)
        return min((samples[t][1][pid], samples[t][0]) for t in window if t in samples)

    worst = 0.0
    for pid in sorted(pids):
        (before, first), (after, last) = floor(pid, EARLY), floor(pid, LATE)
        tasks = last - first
        if tasks < (LATE[0] - EARLY[-1]) // 2:
            sys.exit(f"run_scale: {tasks} tasks between the floors of rank pid {pid}: the tasks "
                     "were not handed out in task order")
        growth = (after - before) * 1024.0
        worst = max(worst, growth / tasks)
        print(f"rank pid {pid}: floor {before / 1024:.1f} -> {after / 1024:.1f} MiB over {tasks} "
              f"tasks ({growth / tasks:+.2f} bytes per task)")
        if growth > max_per_task * tasks + 4096:
            sys.exit(f"run_scale: rank pid {pid} grew by {growth / tasks:.1f} bytes per finished "
                     f"task (limit {max_per_task})")
    print(f"run_scale: memory growth at most {worst:.2f} bytes per finished task")


if __name__ == "__main__":
    main()
