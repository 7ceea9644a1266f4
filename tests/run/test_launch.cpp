// What the process tells from its environment: the SLURM task count against MPI's world size
// (a mis-launch), and whether an MPI launcher started it (how progress is printed).
#include <gtest/gtest.h>

#include <map>
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

TEST(StartedByMpiLauncher, EachLauncherFamilyLeavesItsVariable) {
  EXPECT_FALSE(started_by_mpi_launcher(environment({})));
  EXPECT_FALSE(started_by_mpi_launcher(environment({{"SLURM_JOB_ID", "42"}})));  // sbatch alone
  EXPECT_TRUE(started_by_mpi_launcher(environment({{"OMPI_COMM_WORLD_SIZE", "2"}})));  // mpirun
  EXPECT_TRUE(started_by_mpi_launcher(environment({{"PMIX_RANK", "0"}})));  // srun --mpi=pmix
  EXPECT_TRUE(started_by_mpi_launcher(environment({{"PMI_RANK", "0"}})));   // MPICH, pmi2
}

}  // namespace
}  // namespace qsweep::run
