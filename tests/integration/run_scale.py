#!/usr/bin/python3
"""Runs a sweep under mpirun and samples the resident memory of every rank at each progress line.

  run_scale.py RANKS MAX_GROWTH_BYTES_PER_TASK -- QSWEEP run SWEEP -o OUT ...

Progress lines ("qsweep: N/M tasks ...") come every --progress seconds (stderr is a pipe here).
Between the first line at >= 20% and the last line, the resident memory of each rank may grow by
at most MAX_GROWTH_BYTES_PER_TASK x the tasks finished in between (plus one page per rank), i.e.
memory does not grow with the number of finished tasks. Exits non-zero otherwise.
"""
import os
import re
import subprocess
import sys

PROGRESS = re.compile(r"qsweep: (\d+)/(\d+) tasks")


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


def mpi_launch(ranks):
    """The launcher of the MPI qsweep is built with (QSWEEP_MPIEXEC, else mpirun) for RANKS ranks:
    Open MPI needs --oversubscribe for more ranks than cores; MPICH's Hydra does it by default."""
    mpiexec = os.environ.get("QSWEEP_MPIEXEC", "mpirun")
    version = subprocess.run([mpiexec, "--version"], capture_output=True, text=True).stdout
    open_mpi = "Open MPI" in version or "OpenRTE" in version  # mpirun's words, mpiexec's
    return [mpiexec, "-n", str(ranks)] + (["--oversubscribe"] if open_mpi else [])


def main():
    ranks, max_per_task = int(sys.argv[1]), float(sys.argv[2])
    command = sys.argv[sys.argv.index("--") + 1:]
    job = subprocess.Popen(mpi_launch(ranks) + command,
                           stderr=subprocess.PIPE, text=True)
    samples = []  # (finished, total, {pid: rss KiB})
    for line in job.stderr:
        match = PROGRESS.search(line)
        if not match:
            sys.stderr.write(line)
            continue
        pids = ranks_of(job.pid)
        rss = {pid: rss_kib(pid) for pid in pids}
        samples.append((int(match[1]), int(match[2]), {p: r for p, r in rss.items() if r}))
        print(f"{match[1]:>7}/{match[2]} tasks: RSS MiB " +
              " ".join(f"{r / 1024:.1f}" for r in samples[-1][2].values()), flush=True)
    if job.wait() != 0:
        sys.exit(f"run_scale: mpirun exited with {job.returncode}")
    total = samples[-1][1] if samples else 0
    start = next((s for s in samples if s[0] >= 0.2 * total and len(s[2]) == ranks), None)
    end = next((s for s in reversed(samples) if len(s[2]) == ranks), None)
    if start is None or end is None or end[0] - start[0] < 0.5 * total:
        sys.exit("run_scale: too few progress samples during the run (faster than --progress?)")
    tasks = end[0] - start[0]
    worst = 0.0
    for pid, before in start[2].items():
        after = end[2].get(pid, before)
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
