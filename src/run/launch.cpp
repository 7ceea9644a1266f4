#include "qsweep/run/launch.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <array>
#include <charconv>
#include <cstring>
#include <utility>
#include <vector>

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

struct LaunchVariable {
  const char* name;
  bool is_rank;      // a rank (> 0 says several processes), else a count (> 1 does)
  MpiFamily family;  // the MPI family of the launchers that set it; `other` for SLURM's
};

// PMIx launchers: Open MPI's mpirun (and PRRTE), srun --mpi=pmix; PMI-1/2 launchers: MPICH's
// Hydra mpiexec (and Intel MPI's), srun --mpi=pmi2.
constexpr std::array<LaunchVariable, 8> kLaunchVariables{{
    {"SLURM_NTASKS", false, MpiFamily::other},
    {"SLURM_NPROCS", false, MpiFamily::other},
    {"OMPI_COMM_WORLD_SIZE", false, MpiFamily::open_mpi},
    {"PMIX_SIZE", false, MpiFamily::open_mpi},
    {"PMIX_RANK", true, MpiFamily::open_mpi},
    {"PMI_SIZE", false, MpiFamily::mpich},
    {"MPI_LOCALNRANKS", false, MpiFamily::mpich},
    {"PMI_RANK", true, MpiFamily::mpich},
}};
constexpr const char* kAllowSingleRank = "QSWEEP_ALLOW_SINGLE_RANK";

const char* family_name(MpiFamily family) {
  switch (family) {
    case MpiFamily::open_mpi:
      return "Open MPI";
    case MpiFamily::mpich:
      return "MPICH";
    case MpiFamily::other:
      break;
  }
  return "another MPI";
}

const char* launchers_of(MpiFamily family) {
  switch (family) {
    case MpiFamily::open_mpi:
      return "Open MPI's mpirun (mpirun.openmpi on Debian) or srun --mpi=pmix";
    case MpiFamily::mpich:
      return "MPICH's mpiexec (mpiexec.mpich on Debian) or srun --mpi=pmi2";
    case MpiFamily::other:
      break;
  }
  return "the launcher of its MPI";
}

}  // namespace

Environment launch_environment() {
  std::map<std::string, std::string> copied;
  const auto copy = [&copied](const char* name) {
    if (const char* value = std::getenv(name)) copied.emplace(name, value);
  };
  copy(kAllowSingleRank);
  for (const LaunchVariable& variable : kLaunchVariables) copy(variable.name);
  return [copied = std::move(copied)](const char* name) -> const char* {
    const auto it = copied.find(name);
    return it == copied.end() ? nullptr : it->second.c_str();
  };
}

MpiFamily built_mpi_family() {
#if defined(OPEN_MPI)
  return MpiFamily::open_mpi;
#elif defined(MPICH_VERSION)
  return MpiFamily::mpich;
#else
  return MpiFamily::other;
#endif
}

std::string single_rank_mislaunch(int world_size, const Environment& env, MpiFamily built) {
  if (world_size != 1) return "";
  const char* allow = env(kAllowSingleRank);
  if (allow != nullptr && std::strcmp(allow, "1") == 0) return "";
  std::vector<std::string> slurm, launcher;
  MpiFamily launcher_family = MpiFamily::other;
  for (const LaunchVariable& variable : kLaunchVariables) {
    if (number_in(env, variable.name) <= (variable.is_rank ? 0 : 1)) continue;
    const std::string said = std::string(variable.name) + "=" + env(variable.name);
    if (variable.family == MpiFamily::other) {
      slurm.push_back(said);
    } else {
      launcher.push_back(said);
      launcher_family = variable.family;
    }
  }
  const std::string alone = "each process would run the whole sweep alone into the same file";
  if (!launcher.empty() && launcher_family != built) {
    return fmt::format(
        "started by a launcher of {} as one of several processes ({}), but this qsweep is built "
        "with {}, which sees 1 rank: {}; start it with {}, or use a qsweep built with {} "
        "(docs/cluster.md, \"Which MPI a build uses\")",
        family_name(launcher_family), fmt::join(launcher, ", "), family_name(built), alone,
        launchers_of(built), family_name(launcher_family));
  }
  if (!slurm.empty()) {
    return fmt::format(
        "SLURM asked for several tasks ({}) but MPI sees 1 rank: qsweep run was started without "
        "srun or mpirun, or by a launcher that gives its processes no MPI ranks (srun "
        "--mpi=none), and {}; start it with srun (--mpi=pmix for Open MPI, --mpi=pmi2 for MPICH) "
        "or mpirun (docs/cluster.md), or set QSWEEP_ALLOW_SINGLE_RANK=1 to use one rank on purpose",
        fmt::join(slurm, ", "), alone);
  }
  if (!launcher.empty()) {
    return fmt::format(
        "the launcher started several processes ({}) but MPI sees 1 rank: its processes did not "
        "join one MPI world, and {}; check that qsweep's MPI library is the one of the launcher "
        "(docs/cluster.md, \"Which MPI a build uses\"), or set QSWEEP_ALLOW_SINGLE_RANK=1 to use "
        "one rank on purpose",
        fmt::join(launcher, ", "), alone);
  }
  return "";
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
