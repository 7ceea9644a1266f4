"""Starting qsweep under the MPI launcher of the build (make_figures.py --run, the tests)."""
import os
import subprocess


def mpi_launch(ranks):
    """The launcher of the MPI qsweep is built with (QSWEEP_MPIEXEC, else mpirun) for RANKS ranks:
    Open MPI needs --oversubscribe for more ranks than cores; MPICH's Hydra does it by default."""
    mpiexec = os.environ.get("QSWEEP_MPIEXEC", "mpirun")
    version = subprocess.run([mpiexec, "--version"], capture_output=True, text=True).stdout
    open_mpi = "Open MPI" in version or "OpenRTE" in version  # mpirun's words, mpiexec's
    return [mpiexec, "-n", str(ranks)] + (["--oversubscribe"] if open_mpi else [])
