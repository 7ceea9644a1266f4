#include "qsweep/run/launch.hpp"

#include <charconv>
#include <cstring>

namespace qsweep::run {
namespace {

// The value of a numeric variable, 0 if unset or not a number.
long number_in(const Environment& env, const char* name) {
  const char* text = env(name);
  if (text == nullptr) return 0;
  long value = 0;
  const char* end = text + std::strlen(text);
  const auto [stop, error] = std::from_chars(text, end, value);
  return error == std::errc() && stop == end ? value : 0;
}

}  // namespace

std::string single_rank_mislaunch(int world_size, const Environment& env) {
  if (world_size != 1) return "";
  const char* allow = env("QSWEEP_ALLOW_SINGLE_RANK");
  if (allow != nullptr && std::strcmp(allow, "1") == 0) return "";
  std::string asked;
  for (const char* name : {"SLURM_NTASKS", "SLURM_NPROCS"}) {
    if (number_in(env, name) > 1) {
      asked += (asked.empty() ? "" : ", ") + std::string(name) + "=" + env(name);
    }
  }
  if (asked.empty()) return "";
  return "SLURM asked for several tasks (" + asked +
         ") but MPI sees 1 rank: qsweep run was started without srun or mpirun, or by a "
         "launcher that gives its processes no MPI ranks (srun --mpi=none), and each process "
         "would run the whole sweep alone into the same file; start it with srun (--mpi=pmix for "
         "Open MPI, --mpi=pmi2 for MPICH) or mpirun (docs/cluster.md), or set "
         "QSWEEP_ALLOW_SINGLE_RANK=1 to use one rank on purpose";
}

bool started_by_mpi_launcher(const Environment& env) {
  // Open MPI's mpirun; PMIx launchers (Open MPI, PRRTE, srun --mpi=pmix); PMI-1/2 launchers
  // (MPICH's and Intel MPI's mpiexec, srun --mpi=pmi2).
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"}) {
    if (env(name) != nullptr) return true;
  }
  return false;
}

}  // namespace qsweep::run
