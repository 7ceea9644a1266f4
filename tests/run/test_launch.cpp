// What the process tells from its environment: the process counts of SLURM and of MPI launchers
// of either family against MPI's world size (a mis-launch), and whether an MPI launcher started
// it (how progress is printed).
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "qsweep/run/launch.hpp"

namespace qsweep::run {
namespace {

// An environment made of exactly these variables.
Environment environment(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](const char* name) -> const char* {
    const auto it = variables.find(name);
    return it == variables.end() ? nullptr : it->second.c_str();
  };
}

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(SingleRankMislaunch, SeveralSlurmTasksButOneMpiRankIsRefused) {
  const std::string problem = single_rank_mislaunch(1, environment({{"SLURM_NTASKS", "3"}}));
  EXPECT_TRUE(mentions(problem, "SLURM_NTASKS=3")) << problem;
  EXPECT_TRUE(mentions(problem, "QSWEEP_ALLOW_SINGLE_RANK=1")) << problem;
  EXPECT_TRUE(mentions(problem, "MPI sees 1 rank")) << problem;
  // SLURM_NPROCS is the older name of the same count; both are named when both say so.
  const std::string both =
      single_rank_mislaunch(1, environment({{"SLURM_NTASKS", "2"}, {"SLURM_NPROCS", "2"}}));
  EXPECT_TRUE(mentions(both, "SLURM_NTASKS=2, SLURM_NPROCS=2")) << both;
  EXPECT_TRUE(
      mentions(single_rank_mislaunch(1, environment({{"SLURM_NPROCS", "16"}})), "SLURM_NPROCS=16"));
}

TEST(SingleRankMislaunch, LaunchesThatMayRun) {
  // Outside SLURM, one task asked for, or several MPI ranks (not necessarily all of them).
  EXPECT_EQ(single_rank_mislaunch(1, environment({})), "");
  EXPECT_EQ(single_rank_mislaunch(1, environment({{"SLURM_NTASKS", "1"}})), "");
  EXPECT_EQ(single_rank_mislaunch(3, environment({{"SLURM_NTASKS", "3"}})), "");
  EXPECT_EQ(single_rank_mislaunch(2, environment({{"SLURM_NTASKS", "4"}})), "");
  // Not a number: not a task count.
  EXPECT_EQ(single_rank_mislaunch(1, environment({{"SLURM_NTASKS", "3x"}})), "");
  // One rank on purpose.
  EXPECT_EQ(single_rank_mislaunch(
                1, environment({{"SLURM_NTASKS", "3"}, {"QSWEEP_ALLOW_SINGLE_RANK", "1"}})),
            "");
  EXPECT_NE(single_rank_mislaunch(
                1, environment({{"SLURM_NTASKS", "3"}, {"QSWEEP_ALLOW_SINGLE_RANK", "0"}})),
            "");
}

TEST(SingleRankMislaunch, TheOtherFamilysLauncherIsRefusedNamingBothFamilies) {
  // mpiexec.mpich -n 3 with an Open MPI build: three singletons, each told PMI_SIZE=3.
  const std::string hydra = single_rank_mislaunch(
      1, environment({{"PMI_RANK", "0"}, {"PMI_SIZE", "3"}, {"MPI_LOCALNRANKS", "3"}}),
      MpiFamily::open_mpi);
  EXPECT_TRUE(mentions(
      hydra, "a launcher of MPICH as one of several processes (PMI_SIZE=3, MPI_LOCALNRANKS=3)"))
      << hydra;
  EXPECT_TRUE(mentions(hydra, "built with Open MPI, which sees 1 rank")) << hydra;
  EXPECT_TRUE(mentions(hydra, "start it with Open MPI's mpirun")) << hydra;
  // The others of the three know only their rank.
  EXPECT_TRUE(
      mentions(single_rank_mislaunch(1, environment({{"PMI_RANK", "2"}}), MpiFamily::open_mpi),
               "a launcher of MPICH as one of several processes (PMI_RANK=2)"));
  // mpirun.openmpi -n 3 with an MPICH build.
  const std::string openmpi = single_rank_mislaunch(
      1, environment({{"OMPI_COMM_WORLD_SIZE", "3"}, {"PMIX_RANK", "1"}}), MpiFamily::mpich);
  EXPECT_TRUE(mentions(
      openmpi,
      "a launcher of Open MPI as one of several processes (OMPI_COMM_WORLD_SIZE=3, PMIX_RANK=1)"))
      << openmpi;
  EXPECT_TRUE(mentions(openmpi, "built with MPICH, which sees 1 rank")) << openmpi;
  EXPECT_TRUE(mentions(openmpi, "start it with MPICH's mpiexec")) << openmpi;
  EXPECT_TRUE(
      mentions(single_rank_mislaunch(1, environment({{"PMIX_SIZE", "4"}}), MpiFamily::mpich),
               "a launcher of Open MPI"));
  // Inside SLURM the launcher's family is what went wrong (srun --mpi=pmix with MPICH).
  EXPECT_TRUE(
      mentions(single_rank_mislaunch(1, environment({{"SLURM_NTASKS", "3"}, {"PMIX_RANK", "2"}}),
                                     MpiFamily::mpich),
               "a launcher of Open MPI"));
}

TEST(SingleRankMislaunch, ALauncherOfTheOwnFamilyWithOneRankIsRefusedToo) {
  const std::string problem =
      single_rank_mislaunch(1, environment({{"OMPI_COMM_WORLD_SIZE", "2"}}), MpiFamily::open_mpi);
  EXPECT_TRUE(mentions(problem, "several processes (OMPI_COMM_WORLD_SIZE=2) but MPI sees 1 rank"))
      << problem;
}

TEST(SingleRankMislaunch, LaunchersOfOneProcessOrOfSeveralRanksMayRun) {
  for (const MpiFamily built : {MpiFamily::open_mpi, MpiFamily::mpich}) {
    // -n 1 of either launcher, rank 0 of a PMI(x) launch that does not say its size.
    EXPECT_EQ(single_rank_mislaunch(1, environment({{"OMPI_COMM_WORLD_SIZE", "1"}}), built), "");
    EXPECT_EQ(single_rank_mislaunch(1, environment({{"PMI_SIZE", "1"}, {"PMI_RANK", "0"}}), built),
              "");
    EXPECT_EQ(single_rank_mislaunch(1, environment({{"PMIX_RANK", "0"}}), built), "");
    // The launcher's ranks are MPI's.
    EXPECT_EQ(single_rank_mislaunch(3, environment({{"PMI_SIZE", "3"}}), built), "");
    EXPECT_EQ(single_rank_mislaunch(3, environment({{"OMPI_COMM_WORLD_SIZE", "3"}}), built), "");
    // One rank on purpose.
    EXPECT_EQ(single_rank_mislaunch(
                  1, environment({{"PMI_SIZE", "3"}, {"QSWEEP_ALLOW_SINGLE_RANK", "1"}}), built),
              "");
  }
}

// Sets a variable for the life of the object, then puts back what was there.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedVariable() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedVariable(const ScopedVariable&) = delete;
  ScopedVariable& operator=(const ScopedVariable&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(LaunchEnvironment, IsACopyMadeBeforeMpiInitChangesTheEnvironment) {
  ScopedVariable pmi_size("PMI_SIZE", "3");
  const Environment launched = launch_environment();
  ScopedVariable changed("PMI_SIZE", "1");
  ScopedVariable added("MPI_LOCALNRANKS", "1");
  EXPECT_STREQ(launched("PMI_SIZE"), "3");
  EXPECT_EQ(launched("MPI_LOCALNRANKS"), nullptr);
}

TEST(StartedByMpiLauncher, EachLauncherFamilyLeavesItsVariable) {
  EXPECT_FALSE(started_by_mpi_launcher(environment({})));
  EXPECT_FALSE(started_by_mpi_launcher(environment({{"SLURM_JOB_ID", "42"}})));  // sbatch alone
  EXPECT_TRUE(started_by_mpi_launcher(environment({{"OMPI_COMM_WORLD_SIZE", "2"}})));  // mpirun
  EXPECT_TRUE(started_by_mpi_launcher(environment({{"PMIX_RANK", "0"}})));  // srun --mpi=pmix
  EXPECT_TRUE(started_by_mpi_launcher(environment({{"PMI_RANK", "0"}})));   // MPICH, pmi2
}

}  // namespace
}  // namespace qsweep::run
