#pragma once
// What a process can tell about how it was started, from its environment: how many processes the
// launcher (SLURM, an MPI launcher of either family) started, against the ranks MPI sees, and
// whether an MPI launcher started it.
#include <cstdlib>
#include <functional>
#include <map>
#include <string>

namespace qsweep::run {

// Looks up an environment variable (nullptr if unset); tests pass their own.
using Environment = std::function<const char*(const char* name)>;
inline const char* process_environment(const char* name) { return std::getenv(name); }

// The launch variables single_rank_mislaunch and started_by_mpi_launcher read, copied from the
// process environment before MPI_Init (an MPI singleton's initialisation sets some of them).
Environment launch_environment();

// The MPI family of a library or a launcher: what each must be paired with.
enum class MpiFamily { open_mpi, mpich, other };
MpiFamily built_mpi_family();  // the MPI this qsweep is compiled against (its mpi.h)

// Why this launch must not run, or "" if it may: MPI sees `world_size` = 1 but the environment
// says the launcher started several processes. SLURM_NTASKS (or its older name SLURM_NPROCS) > 1:
// `qsweep run` started without srun/mpirun inside a batch job, or by a launcher that cannot give
// the processes their MPI ranks (srun --mpi=none). OMPI_COMM_WORLD_SIZE, PMIX_SIZE, PMI_SIZE or
// MPI_LOCALNRANKS > 1, or PMIX_RANK or PMI_RANK > 0: a launcher of the other MPI family than
// `built` (Open MPI's mpirun for an MPICH build, MPICH's mpiexec for an Open MPI build), whose
// processes each become a one-rank world. Either way each process would run the whole sweep
// alone, into the same file. QSWEEP_ALLOW_SINGLE_RANK=1 allows it (one rank on purpose, e.g.
// `mpirun -n 1` in a larger allocation).
std::string single_rank_mislaunch(int world_size, const Environment& env = process_environment,
                                  MpiFamily built = built_mpi_family());

// An MPI launcher started this process (Open MPI's mpirun, a PMIx or PMI launcher such as
// `srun --mpi=pmix` or MPICH's mpiexec): its output goes through the launcher, often to a log.
// Ask before MPI_Init: an MPI singleton's own initialisation sets some of these variables.
bool started_by_mpi_launcher(const Environment& env = process_environment);

}  // namespace qsweep::run
