// Memory of the node and the process (fake /proc and cgroup trees), the per-node ledger and the
// scheduler's memory room on fake maps of several nodes, a dispatch loop over them that never
// exceeds a node's budget and never waits without end, and run_plan refusing a task that cannot
// fit before it writes anything.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "hook_plan.hpp"
#include "qsweep/common/error.hpp"
#include "qsweep/run/memory.hpp"
#include "qsweep/run/runner.hpp"
#include "qsweep/run/scheduler.hpp"

namespace qsweep::run {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

class FakeTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("qsweep-memory-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    write("proc/meminfo", "MemTotal:       16777216 kB\nMemFree:         1000 kB\n");
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const std::string& path, const std::string& text) {
    fs::create_directories((root_ / path).parent_path());
    std::ofstream(root_ / path) << text;
  }
  MachineMemory read() const {
    return machine_memory((root_ / "proc").string(), (root_ / "cgroup").string());
  }

  fs::path root_;
};

TEST_F(FakeTree, MemTotalWithoutACgroupLimit) {
  write("proc/self/cgroup", "0::/user.slice\n");
  write("cgroup/user.slice/memory.max", "max\n");
  const MachineMemory memory = read();
  EXPECT_EQ(memory.bytes, 16.0 * kGiB);
  EXPECT_NE(memory.source.find("MemTotal"), std::string::npos) << memory.source;
}

TEST_F(FakeTree, TheLowestCgroupV2LimitOnThePathCounts) {
  // SLURM: the job's limit above the step's (which has none).
  write("proc/self/cgroup", "0::/slurm/job_7/step_0\n");
  write("cgroup/slurm/job_7/step_0/memory.max", "max\n");
  write("cgroup/slurm/job_7/memory.max", "4294967296\n");
  write("cgroup/slurm/memory.max", "8589934592\n");
  const MachineMemory memory = read();
  EXPECT_EQ(memory.bytes, 4.0 * kGiB);
  EXPECT_NE(memory.source.find("slurm/job_7 (memory.max)"), std::string::npos) << memory.source;
}

TEST_F(FakeTree, CgroupV1MemoryController) {
  write("proc/self/cgroup", "5:cpu,cpuacct:/job\n4:memory:/slurm/uid_0/job_3\n0::/\n");
  write("cgroup/memory/slurm/uid_0/job_3/memory.limit_in_bytes", "2147483648\n");
  write("cgroup/memory/slurm/memory.limit_in_bytes", "9223372036854771712\n");
  EXPECT_EQ(read().bytes, 2.0 * kGiB);
}

TEST_F(FakeTree, ALimitAboveThePhysicalMemoryChangesNothing) {
  write("proc/self/cgroup", "0::/big\n");
  write("cgroup/big/memory.max", "68719476736\n");
  EXPECT_EQ(read().bytes, 16.0 * kGiB);
}

TEST_F(FakeTree, NoMeminfoIsAnError) {
  fs::remove(root_ / "proc/meminfo");
  EXPECT_THROW(read(), Error);
}

TEST(ProcessMemory, ResidentSizeFollowsTouchedMemory) {
  EXPECT_GT(machine_memory().bytes, 0.0);
  const double before = resident_bytes();
  ASSERT_GT(before, 0.0);
  std::vector<char> block(64 << 20, 1);  // touched: resident
  EXPECT_GE(resident_bytes(), before + 60.0 * (1 << 20));
  EXPECT_GE(peak_resident_bytes(), resident_bytes());
  EXPECT_EQ(block[12345], 1);
}

// Ranks 0, 1, 3 on node 0 (budget 100), ranks 2, 4 on node 1 (budget 50); baselines 5 each.
NodeMap two_nodes() {
  NodeMap nodes;
  nodes.node_of_rank = {0, 0, 1, 0, 1};
  nodes.budget = {100.0, 50.0};
  nodes.baseline = {5.0, 5.0, 5.0, 5.0, 5.0};
  nodes.source = {"test", "test"};
  return nodes;
}

TEST(NodeMap, RanksAndTheirText) {
  const NodeMap nodes = two_nodes();
  EXPECT_EQ(nodes.nodes(), 2);
  EXPECT_EQ(nodes.ranks_on(0), 3);
  EXPECT_EQ(nodes.baselines_on(1), 10.0);
  EXPECT_EQ(nodes.ranks_text(0), "ranks 0-1, 3");
  EXPECT_EQ(nodes.ranks_text(1), "ranks 2, 4");
}

TEST(MemoryLedger, ARankIsChargedItsLargestBatchANodeItsRanks) {
  MemoryLedger ledger(two_nodes());
  EXPECT_EQ(ledger.room(0), 85.0);  // 100 less three baselines
  EXPECT_EQ(ledger.room(2), 40.0);
  ledger.hand_out(0, 1, 60.0);
  ledger.hand_out(0, 2, 30.0);  // runs after the first: the rank holds at most 60
  EXPECT_EQ(ledger.charge(0), 60.0);
  EXPECT_EQ(ledger.used(0), 75.0);
  EXPECT_EQ(ledger.room(0), 85.0);  // a third batch of rank 0 also runs in turn
  EXPECT_EQ(ledger.room(1), 25.0);
  EXPECT_EQ(ledger.room(2), 40.0);  // the other node is not affected
  ledger.returned(0, 1);
  EXPECT_EQ(ledger.charge(0), 30.0);
  EXPECT_EQ(ledger.room(3), 55.0);
  ledger.set_baseline(1, 25.0);  // rank 1 kept memory after its task
  EXPECT_EQ(ledger.room(3), 35.0);
  ledger.returned(0, 2);
  EXPECT_TRUE(ledger.node_idle(3));
  EXPECT_EQ(ledger.used(0), 35.0);
}

TEST(MemoryLedger, AnIdleNodeTakesATaskThatFitsItsBudget) {
  NodeMap nodes = two_nodes();
  nodes.baseline = {30.0, 30.0, 5.0, 30.0, 5.0};  // grown baselines: room 10 on node 0
  MemoryLedger ledger(std::move(nodes));
  EXPECT_EQ(ledger.room(0), 10.0);
  EXPECT_EQ(ledger.room_for(0, 80.0), 80.0);   // idle, and 80 fits the budget of 100
  EXPECT_EQ(ledger.room_for(0, 120.0), 10.0);  // never more than the node has
  ledger.hand_out(1, 7, 5.0);
  EXPECT_FALSE(ledger.node_idle(0));
  EXPECT_EQ(ledger.room_for(0, 80.0), 5.0);  // busy: only what is left
}

sweep::Plan memory_plan(const std::vector<double>& memory, const std::vector<double>& results) {
  sweep::Plan plan = testing::hook_plan(memory.size(), "memory", 1.0);
  for (std::size_t i = 0; i < memory.size(); ++i) {
    plan.tasks.estimate(i).memory = static_cast<float>(memory[i]);
    plan.tasks.estimate(i).result_memory = results.empty() ? 0.0F : static_cast<float>(results[i]);
  }
  return plan;
}

TEST(SchedulerMemory, ABatchHoldsTheResultsOfItsEarlierTasks) {
  const sweep::Plan plan = memory_plan({10, 40, 10, 10}, {2, 2, 2, 2});
  Scheduler scheduler(plan, std::vector<std::uint64_t>{0, 1, 2, 3},
                      std::vector<std::uint64_t>(4, 0));
  const Batch all{{0, 1, 2, 3}, {1, 1, 1, 1}};
  EXPECT_EQ(scheduler.memory_of(all), 42.0);  // task 1 with task 0's result
  EXPECT_EQ(scheduler.memory_of(Batch{{2, 3}, {1, 1}}), 12.0);
  EXPECT_EQ(scheduler.next_memory(), 10.0);
  // Equal costs: task order. Room 41 takes task 0 but not task 1 (40 + 2 held).
  const Batch first = scheduler.next(100.0, 10, 41.0);
  EXPECT_EQ(first.ids, (std::vector<std::uint64_t>{0}));
  EXPECT_EQ(scheduler.next_memory(), 40.0);
  EXPECT_TRUE(scheduler.next(100.0, 10, 39.0).ids.empty());  // the next task waits ...
  EXPECT_EQ(scheduler.remaining_tasks(), 3u);                // ... and nothing overtakes it
  const Batch rest = scheduler.next(100.0, 10, 50.0);
  EXPECT_EQ(rest.ids, (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(rest.attempts, (std::vector<std::int32_t>{1, 1, 1}));
  EXPECT_TRUE(scheduler.empty());
  EXPECT_EQ(scheduler.next_memory(), 0.0);
}

// The coordinator's dispatch (runner.cpp) on a fake cluster: every rank takes up to two batches
// while the ledger gives room for them; batches end in a random order. On every node the
// baselines plus the charges stay within the budget, except for one batch started on an idle
// node; every task runs; the biggest task (a whole node) leaves the node's other ranks idle.
TEST(DispatchOnFakeNodes, BudgetsHoldAndEveryTaskRuns) {
  std::vector<double> memory;
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> size(0.0, 40.0);
  for (int i = 0; i < 300; ++i) memory.push_back(size(random));
  memory[17] = 95.0;  // node 0 alone can run it, and only with its ranks idle
  memory[200] = 45.0;
  std::vector<double> results(memory.size(), 0.5);
  sweep::Plan plan = memory_plan(memory, results);
  for (std::uint64_t id = 0; id < plan.tasks.size(); ++id) {
    sweep::TaskEstimate& estimate = plan.tasks.estimate(id);
    estimate.cost = 1e-3 * (1.0 + estimate.memory);  // biggest first
  }
  std::vector<std::uint64_t> todo(plan.tasks.size());
  for (std::uint64_t id = 0; id < todo.size(); ++id) todo[id] = id;
  Scheduler scheduler(plan, todo, std::vector<std::uint64_t>(plan.tasks.size(), 0));
  NodeMap nodes = two_nodes();
  nodes.baseline = {1.0, 1.0, 1.0, 1.0, 1.0};
  MemoryLedger ledger(nodes);
  const int ranks = static_cast<int>(nodes.node_of_rank.size());

  struct Out {
    int rank;
    std::uint64_t seq;
    Batch batch;
  };
  std::vector<Out> out;
  std::uint64_t seq = 0;
  std::size_t ran = 0;
  bool whole_node_alone = false;
  for (int round = 0; round < 100000 && (!scheduler.empty() || !out.empty()); ++round) {
    for (int rank = 0; rank < ranks; ++rank) {
      while (std::count_if(out.begin(), out.end(), [&](const Out& o) { return o.rank == rank; }) <
                 2 &&
             !scheduler.empty()) {
        const bool idle = ledger.node_idle(rank);
        Batch batch = scheduler.next(0.05, 8, ledger.room_for(rank, scheduler.next_memory()));
        if (batch.ids.empty()) break;
        const double bytes = scheduler.memory_of(batch);
        ledger.hand_out(rank, seq, bytes);
        const int node = ledger.node_of(rank);
        if (!idle) {
          EXPECT_LE(ledger.used(node), nodes.budget[static_cast<std::size_t>(node)] + 1e-9)
              << "node " << node << " over its budget after batch " << seq;
        }
        if (std::find(batch.ids.begin(), batch.ids.end(), 17u) != batch.ids.end()) {
          EXPECT_EQ(node, 0);  // 95 does not fit node 1's budget of 50
          whole_node_alone = true;
        }
        out.push_back({rank, seq++, std::move(batch)});
      }
    }
    // While task 17 is out, the other ranks of node 0 hold at most the 2 it leaves (95 and
    // three baselines of 1); its own rank may queue more, which runs after it.
    for (const Out& o : out) {
      if (std::find(o.batch.ids.begin(), o.batch.ids.end(), 17u) == o.batch.ids.end()) continue;
      for (const Out& other : out) {
        if (other.rank != o.rank && ledger.node_of(other.rank) == 0) {
          EXPECT_LE(scheduler.memory_of(other.batch), 2.0 + 1e-9);
        }
      }
    }
    if (out.empty()) continue;
    const std::size_t done = std::uniform_int_distribution<std::size_t>(0, out.size() - 1)(random);
    ran += out[done].batch.ids.size();
    ledger.returned(out[done].rank, out[done].seq);
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(done));
  }
  EXPECT_TRUE(scheduler.empty());
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(ran, plan.tasks.size());
  EXPECT_TRUE(whole_node_alone);
}

// run_plan on one rank refuses a plan with a task that cannot fit, before any file exists.
class RunMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("qsweep-run-memory-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    options_.output = (dir_ / "out.h5").string();
    options_.progress_seconds = -1;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string refusal(const sweep::Plan& plan) {
    try {
      run_plan(world_, plan, options_, testing::hook(0us));
    } catch (const AgreedInputError& e) {
      EXPECT_FALSE(fs::exists(options_.output));
      EXPECT_FALSE(fs::exists(dir_));
      return e.what();
    }
    ADD_FAILURE() << "the plan ran";
    return "";
  }

  Comm world_ = Comm::world();
  fs::path dir_;
  RunOptions options_;
};

TEST_F(RunMemory, ATaskOverMaxTaskMemoryIsRefused) {
  sweep::Plan plan = memory_plan({1.0, 3.0 * kGiB, 1.0}, {});
  options_.max_task_memory = 2.0 * kGiB;
  const std::string message = refusal(plan);
  EXPECT_EQ(message.rfind("memory.yaml: task 1 ", 0), 0u) << message;
  EXPECT_NE(message.find("more than --max-task-memory 2.00 GiB"), std::string::npos) << message;
}

TEST_F(RunMemory, ByDefaultATaskMustFitTheNodesShare) {
  const sweep::Plan plan = memory_plan({1.0, 2.0 * machine_memory().bytes}, {});
  const std::string message = refusal(plan);
  EXPECT_NE(message.find("the default --max-task-memory"), std::string::npos) << message;
}

TEST_F(RunMemory, ATaskLargerThanTheNodeIsRefusedWhateverMaxTaskMemorySays) {
  const sweep::Plan plan = memory_plan({1.0, 3.0 * kGiB}, {});
  options_.max_task_memory = 100.0 * kGiB;
  options_.node_memory = 2.0 * kGiB;
  const std::string message = refusal(plan);
  EXPECT_NE(message.find("that node 0 may hold (--node-memory)"), std::string::npos) << message;
}

TEST_F(RunMemory, TasksThatFitRun) {
  const sweep::Plan plan = memory_plan({1.0, 0.5 * kGiB, 1.0}, {});
  options_.node_memory = 1.0 * kGiB;
  options_.max_task_memory = 0.9 * kGiB;
  EXPECT_EQ(run_plan(world_, plan, options_, testing::hook(0us)).exit_code, 0);
}

}  // namespace
}  // namespace qsweep::run
