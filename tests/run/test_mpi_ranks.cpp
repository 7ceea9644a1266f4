// The runner on 3 ranks (2 cores, so --oversubscribe): the launcher test starts this program
// under mpirun with the MpiRanks.* tests, which skip when the program runs as a singleton.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/serialization/vector.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <vector>

#include "../store/mpi_test_environment.hpp"
#include "hook_plan.hpp"
#include "qsweep/common/exit_codes.hpp"
#include "qsweep/run/runner.hpp"
#include "qsweep/store/results_reader.hpp"

namespace qsweep::run {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using qsweep::testing::hook;
using qsweep::testing::hook_plan;

TEST(MpiLauncher, ThreeRanks) {
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  // This process is an MPI singleton: its OMPI_/PMI_/PMIX_ variables would confuse a new
  // launcher. Open MPI needs --oversubscribe for more ranks than cores (MPICH's Hydra does it by
  // default).
  const std::string oversubscribe =
      std::string(QSWEEP_MPI_FAMILY) == "openmpi" ? " --oversubscribe " : " ";
  const std::string command =
      "env $(env | grep -oE '^(OMPI|PMI|PMIX|OPAL|ORTE)[A-Za-z0-9_]*' | sed 's/^/-u /') "
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " QSWEEP_MPIEXEC " -n 3" +
      oversubscribe + self + " --gtest_filter='MpiRanks.*' > mpi_ranks.log 2>&1";
  const int status = std::system(command.c_str());
  EXPECT_EQ(status, 0) << "see mpi_ranks.log in the test's working directory";
}

class MpiRanks : public ::testing::Test {
 protected:
  void SetUp() override {
    if (world_.size() < 2) GTEST_SKIP() << "runs under mpirun (MpiLauncher.ThreeRanks)";
    std::string dir;
    if (world_.rank() == 0) {
      dir = (fs::temp_directory_path() /
             ("qsweep-ranks-" + std::to_string(::getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                .string();
      fs::remove_all(dir);
    }
    world_.broadcast(dir, 0);
    dir_ = dir;
    options_.output = (dir_ / "out.h5").string();
    options_.progress_seconds = -1;
  }
  void TearDown() override {
    world_.barrier();
    if (world_.rank() == 0 && !dir_.empty()) fs::remove_all(dir_);
  }

  Comm world_ = Comm::world();
  fs::path dir_;
  RunOptions options_;
};

TEST_F(MpiRanks, EveryRankWorksAndFailuresAreRecorded) {
  const sweep::Plan plan = hook_plan(300, "ranks", 0.0);
  const RunResult result = run_plan(world_, plan, options_, hook(1ms, {7, 150, 299}));
  EXPECT_EQ(result.exit_code, exit_code::tasks_failed);  // the same on every rank
  if (world_.rank() != 0) return;
  EXPECT_EQ(result.counts.done, 297u);
  EXPECT_EQ(result.counts.failed, 3u);

  const store::ResultsReader reader(options_.output);
  const auto statuses = reader.statuses();
  const auto attempts = reader.attempts();
  for (std::uint64_t id = 0; id < statuses.size(); ++id) {
    const bool fails = id == 7 || id == 150 || id == 299;
    EXPECT_EQ(statuses[id], fails ? TaskStatus::failed : TaskStatus::done);
    EXPECT_EQ(attempts[id], 1);
  }
  std::set<std::int64_t> ranks;
  for (const store::TableColumn& column : reader.read_table("tasks")) {
    if (column.name != "rank") continue;
    for (const std::int64_t rank : std::get<std::vector<std::int64_t>>(column.values))
      ranks.insert(rank);
  }
  EXPECT_EQ(ranks, (std::set<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(reader.attribute("mpi_ranks"), "3");
}

TEST_F(MpiRanks, TasksThatSpanRanksRunOnAGroupOfTheirSizeAmongOrdinaryTasks) {
  // Task 200 fits one rank: with ranks auto it runs as an ordinary task.
  const sweep::Plan plan =
      hook_plan(300, "spans", 0.0, {{5, 2}, {100, 2}, {200, sweep::kAutoRanks}});
  std::set<std::uint64_t> spanned;  // by every member
  const SpanningTaskFunction on_group = [&](const sweep::Task& task, const Comm& group,
                                            const exact_mpi::StopCheck& /*stop*/) {
    if (group.size() != 2) throw std::runtime_error("a group of " + std::to_string(group.size()));
    // Collective over the group: both members run the task at the same time.
    if (!group.any(group.rank() == 1)) throw std::runtime_error("the second member is missing");
    spanned.insert(task.id);
    return qsweep::testing::fake_result(task);
  };
  const RunResult result = run_plan(world_, plan, options_, hook(100us), on_group);
  EXPECT_EQ(result.exit_code, exit_code::ok);
  if (world_.rank() == 0) {
    EXPECT_TRUE(spanned.empty());  // rank 0 coordinates and never joins a group
    EXPECT_EQ(result.counts.done, 300u);
    const store::ResultsReader reader(options_.output);
    for (const store::TableColumn& column : reader.read_table("tasks")) {
      if (column.name != "rank") continue;
      const auto& ranks = std::get<std::vector<std::int64_t>>(column.values);
      EXPECT_NE(ranks[5], 0);
      EXPECT_NE(ranks[100], 0);
    }
  }
  // Every member ran both spanning tasks, and nothing else on a group.
  const std::vector<std::vector<std::uint64_t>> all =
      world_.gather(std::vector<std::uint64_t>(spanned.begin(), spanned.end()), 0);
  if (world_.rank() == 0) {
    EXPECT_EQ(all[1], (std::vector<std::uint64_t>{5, 100}));
    EXPECT_EQ(all[2], (std::vector<std::uint64_t>{5, 100}));
  }
}

TEST_F(MpiRanks, ADedicatedCoordinatorComputesNothing) {
  options_.dedicated_coordinator = true;
  const sweep::Plan plan = hook_plan(100, "dedicated", 0.0);
  EXPECT_EQ(run_plan(world_, plan, options_, hook(0us)).exit_code, exit_code::ok);
  if (world_.rank() != 0) return;
  const store::ResultsReader reader(options_.output);
  for (const store::TableColumn& column : reader.read_table("tasks")) {
    if (column.name != "rank") continue;
    for (const std::int64_t rank : std::get<std::vector<std::int64_t>>(column.values))
      EXPECT_NE(rank, 0);
  }
}

TEST_F(MpiRanks, AWorkerThatIsToldToStopStopsEveryone) {
  // Only the rank that runs task 120 gets SIGTERM (as a kill of one process would): it stops
  // at once and asks rank 0 to stop the rest. Task 120 and every later task wait at a gate
  // (one per rank) that stays shut during the run, so no rank can finish the sweep or get past
  // the gate unless it was told to stop: every rank must return, and none of those tasks is
  // done. Then a resume on all ranks finishes the file.
  const sweep::Plan plan = hook_plan(400, "worker-stop", 0.0);
  const auto gate = std::make_shared<qsweep::testing::Gate>();
  const RunResult stopped =
      run_plan(world_, plan, options_, qsweep::testing::signal_then_gate(SIGTERM, 120, gate));
  // A task at this rank's gate (if one got there) was abandoned, not waited for.
  EXPECT_FALSE(gate->passed_through()) << "rank " << world_.rank();
  gate->open();
  EXPECT_EQ(stopped.exit_code, exit_code::incomplete);
  if (world_.rank() == 0) {
    const store::ResultsReader reader(options_.output);
    const std::vector<TaskStatus> statuses = reader.statuses();
    EXPECT_EQ(statuses[120], TaskStatus::pending);
    EXPECT_EQ(reader.attempts()[120], 1);
    for (std::uint64_t id = 120; id < statuses.size(); ++id)
      EXPECT_EQ(statuses[id], TaskStatus::pending) << id;
    EXPECT_LE(stopped.counts.done, 120u);
  }
  options_.resume = true;
  EXPECT_EQ(run_plan(world_, plan, options_, hook(0us)).exit_code, exit_code::ok);
  if (world_.rank() == 0) {
    const store::ResultsReader reader(options_.output);
    for (const TaskStatus status : reader.statuses()) EXPECT_EQ(status, TaskStatus::done);
    EXPECT_EQ(reader.attempts()[120], 2);
  }
}

TEST_F(MpiRanks, AStopNowAbandonsATaskThatSpansRanks) {
  // The leader of task 5's group gets SIGTERM while the task runs (as a kill of one process
  // would). The stand-in asks its StopCheck as the engine does between layers, and leaves when
  // any member's says stop: without that it would run forever, so the run ends only if both
  // members abandon the task. It stays pending with its attempt counted; a resume finishes it.
  const sweep::Plan plan = hook_plan(100, "span-stop", 0.0, {{5, 2}});
  const SpanningTaskFunction stopped_on_group = [](const sweep::Task&, const Comm& group,
                                                   const exact_mpi::StopCheck& stop) {
    if (group.rank() == 0) kill(getpid(), SIGTERM);
    for (;;) {
      if (group.any(stop())) throw exact_mpi::Stopped();
    }
    return sweep::TaskOutcome{};
  };
  const RunResult stopped = run_plan(world_, plan, options_, hook(0us), stopped_on_group);
  EXPECT_EQ(stopped.exit_code, exit_code::incomplete);
  if (world_.rank() == 0) {
    const store::ResultsReader reader(options_.output);
    EXPECT_EQ(reader.statuses()[5], TaskStatus::pending);
    EXPECT_EQ(reader.attempts()[5], 1);
  }
  options_.resume = true;
  const SpanningTaskFunction on_group = [](const sweep::Task& task, const Comm&,
                                           const exact_mpi::StopCheck&) {
    return qsweep::testing::fake_result(task);
  };
  EXPECT_EQ(run_plan(world_, plan, options_, hook(0us), on_group).exit_code, exit_code::ok);
  if (world_.rank() == 0) {
    const store::ResultsReader reader(options_.output);
    for (const TaskStatus status : reader.statuses()) EXPECT_EQ(status, TaskStatus::done);
    EXPECT_EQ(reader.attempts()[5], 2);
  }
}

TEST_F(MpiRanks, GatherAndTheRanksOfANode) {
  const std::vector<std::string> names = world_.gather("rank " + std::to_string(world_.rank()), 0);
  if (world_.rank() == 0) {
    ASSERT_EQ(names.size(), static_cast<std::size_t>(world_.size()));
    for (int rank = 0; rank < world_.size(); ++rank)
      EXPECT_EQ(names[static_cast<std::size_t>(rank)], "rank " + std::to_string(rank));
  } else {
    EXPECT_TRUE(names.empty());
  }
  const Comm node = world_.split_shared();  // every rank of this test runs on this host
  EXPECT_EQ(node.size(), world_.size());
  EXPECT_EQ(node.rank(), world_.rank());
}

TEST_F(MpiRanks, TasksOnANodeStayWithinItsMemory) {
  // All ranks share this host, one node of 1000 GiB; tasks of 600 GiB (4) and 100 GiB (30) by
  // their estimates (nothing is allocated: the hook only logs when each task runs, by the
  // monotonic clock every process on the host shares). Two big tasks never run at once, and at
  // no instant do the running tasks' estimates add up to more than the node's memory.
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  sweep::Plan plan = hook_plan(34, "node-memory", 0.0);
  for (std::uint64_t id = 0; id < plan.tasks.size(); ++id)
    plan.tasks.estimate(id).memory = static_cast<float>((id % 8 == 0 ? 600.0 : 100.0) * kGiB);
  options_.node_memory = 1000.0 * kGiB;
  options_.max_task_memory = 1000.0 * kGiB;
  const fs::path log = dir_ / ("rank-" + std::to_string(world_.rank()) + ".log");
  const auto logged = [log, run_task = hook(2ms)](const sweep::Task& task) {
    const auto now = [] { return std::chrono::steady_clock::now().time_since_epoch().count(); };
    const auto start = now();
    sweep::TaskOutcome outcome = run_task(task);
    std::ofstream(log, std::ios::app) << task.id << ' ' << start << ' ' << now() << '\n';
    return outcome;
  };
  EXPECT_EQ(run_plan(world_, plan, options_, logged).exit_code, exit_code::ok);
  world_.barrier();  // every log is complete
  if (world_.rank() != 0) return;
  std::vector<std::pair<long long, double>> changes;  // (time, +-memory), ends first at a tie
  std::set<std::uint64_t> ran;
  for (int rank = 0; rank < world_.size(); ++rank) {
    std::ifstream in(dir_ / ("rank-" + std::to_string(rank) + ".log"));
    std::uint64_t id = 0;
    long long start = 0, end = 0;
    while (in >> id >> start >> end) {
      ran.insert(id);
      changes.emplace_back(start, plan.tasks.estimate(id).memory);
      changes.emplace_back(end, -plan.tasks.estimate(id).memory);
    }
  }
  EXPECT_EQ(ran.size(), plan.tasks.size());
  std::sort(changes.begin(), changes.end());
  double running = 0.0;
  for (const auto& [time, change] : changes) {
    running += change;
    EXPECT_LE(running, options_.node_memory) << "at " << time;
  }
}

TEST_F(MpiRanks, Usr1OnEveryRankDrains) {
  // Every rank gets SIGUSR1 (as mpirun forwards it to all): here each rank raises it for itself
  // in the first task it runs with an id of 60 or more.
  const sweep::Plan plan = hook_plan(600, "drain-all", 0.0);
  auto flag = std::make_shared<std::atomic<bool>>(false);
  const TaskFunction task_function = [flag](const sweep::Task& task) {
    if (task.id >= 60 && !flag->exchange(true)) kill(getpid(), SIGUSR1);
    std::this_thread::sleep_for(2ms);
    return qsweep::testing::fake_result(task);
  };
  const RunResult stopped = run_plan(world_, plan, options_, task_function);
  EXPECT_EQ(stopped.exit_code, exit_code::incomplete);
  if (world_.rank() == 0) {
    const store::ResultsReader reader(options_.output);
    const auto statuses = reader.statuses();
    const auto attempts = reader.attempts();
    for (std::uint64_t id = 0; id < statuses.size(); ++id) {
      // Drained: what was started finished, what was not started was never counted.
      if (statuses[id] != TaskStatus::done) {
        EXPECT_EQ(attempts[id], 0) << id;
      }
    }
  }
}

}  // namespace
}  // namespace qsweep::run
