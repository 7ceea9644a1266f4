#pragma once
// What a process can tell about how it was started, from its environment: the task count SLURM
// asked for and whether an MPI launcher started it.
#include <cstdlib>
#include <functional>
#include <string>

namespace qsweep::run {

// Looks up an environment variable (nullptr if unset); tests pass their own.
using Environment = std::function<const char*(const char* name)>;
inline const char* process_environment(const char* name) { return std::getenv(name); }

// Why this launch must not run, or "" if it may: SLURM asked for several tasks (SLURM_NTASKS or
// its older name SLURM_NPROCS > 1) but MPI sees `world_size` = 1. That is `qsweep run` started
// without srun/mpirun inside a batch job, or by a launcher that cannot give the processes their
// MPI ranks (srun --mpi=none): each process would run the whole sweep alone, into the same file.
// QSWEEP_ALLOW_SINGLE_RANK=1 allows it (one rank on purpose, e.g. `mpirun -n 1` in a larger
// allocation).
std::string single_rank_mislaunch(int world_size, const Environment& env = process_environment);

// An MPI launcher started this process (Open MPI's mpirun, a PMIx or PMI launcher such as
// `srun --mpi=pmix` or MPICH's mpiexec): its output goes through the launcher, often to a log.
// Ask before MPI_Init: an MPI singleton's own initialisation sets some of these variables.
bool started_by_mpi_launcher(const Environment& env = process_environment);

}  // namespace qsweep::run
