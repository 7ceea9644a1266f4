// run_plan on one rank (the test program is an MPI singleton): results in their rows, failures
// recorded, refusing to clobber, resume, and the two kinds of stop.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "../store/mpi_test_environment.hpp"
#include "hook_plan.hpp"
#include "qsweep/common/exit_codes.hpp"
#include "qsweep/run/runner.hpp"
#include "qsweep/run/signals.hpp"
#include "qsweep/store/results_reader.hpp"

namespace qsweep::run {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using qsweep::testing::hook;
using qsweep::testing::hook_plan;

class RunPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("qsweep-run-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    options_.output = (dir_ / "sub" / "out.h5").string();  // the directory is made on demand
    options_.progress_seconds = -1;
  }
  void TearDown() override { fs::remove_all(dir_); }

  RunResult run(const sweep::Plan& plan, const TaskFunction& task) {
    return run_plan(world_, plan, options_, task);
  }

  // EQ of each task (by id) as stored in /exact.
  std::vector<double> stored_EQ() const {
    const store::ResultsReader reader(options_.output);
    std::vector<double> by_id(reader.task_count());
    std::vector<std::int64_t> ids;
    std::vector<double> eq;
    for (const store::TableColumn& column : reader.read_table("exact")) {
      if (column.name == "task_id") ids = std::get<std::vector<std::int64_t>>(column.values);
      if (column.name == "EQ") eq = std::get<std::vector<double>>(column.values);
    }
    for (std::size_t row = 0; row < ids.size(); ++row)
      by_id.at(static_cast<std::size_t>(ids[row])) = eq[row];
    return by_id;
  }

  Comm world_ = Comm::world();
  fs::path dir_;
  RunOptions options_;
};

TEST_F(RunPlanTest, EveryTaskRunsOnceAndLandsInItsRow) {
  const sweep::Plan plan = hook_plan(600, "all-done");
  const RunResult result = run(plan, hook(0us));
  EXPECT_EQ(result.exit_code, exit_code::ok);
  EXPECT_EQ(result.counts.done, 600u);
  EXPECT_FALSE(result.left_task_running);

  const store::ResultsReader reader(options_.output);
  for (const TaskStatus status : reader.statuses()) EXPECT_EQ(status, TaskStatus::done);
  for (const std::int32_t attempts : reader.attempts()) EXPECT_EQ(attempts, 1);
  const std::vector<double> eq = stored_EQ();
  for (const sweep::Task& task : plan.tasks) EXPECT_EQ(eq[task.id], 2.0 * task.system().lambda);
  EXPECT_EQ(reader.attribute("mpi_ranks"), "1");
}

TEST_F(RunPlanTest, ThrowingTasksAreRecordedAndTheSweepGoesOn) {
  const sweep::Plan plan = hook_plan(40, "failures");
  const RunResult result = run(plan, hook(0us, {3, 17, 39}));
  EXPECT_EQ(result.exit_code, exit_code::tasks_failed);
  EXPECT_EQ(result.counts.done, 37u);
  EXPECT_EQ(result.counts.failed, 3u);

  const store::ResultsReader reader(options_.output);
  const auto problems = reader.problems(TaskStatus::failed, 10);
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_EQ(problems[0].id, 3u);
  EXPECT_EQ(problems[0].error, "task 3 cannot be computed");
  EXPECT_EQ(problems[2].id, 39u);
  EXPECT_TRUE(std::isnan(stored_EQ()[17]));
}

TEST_F(RunPlanTest, AnExistingFileIsNeverReplacedWithoutForce) {
  const sweep::Plan plan = hook_plan(5, "refuse");
  fs::create_directories(fs::path(options_.output).parent_path());
  { std::ofstream(options_.output) << "a week of results"; }
  try {
    run(plan, hook(0us));
    FAIL() << "ran into an existing file";
  } catch (const AgreedInputError& e) {
    EXPECT_NE(std::string(e.what()).find("already exists"), std::string::npos) << e.what();
  }
  std::ifstream in(options_.output);
  std::string content;
  std::getline(in, content);
  EXPECT_EQ(content, "a week of results");

  options_.force = true;
  EXPECT_EQ(run(plan, hook(0us)).exit_code, exit_code::ok);
  EXPECT_EQ(store::ResultsReader(options_.output).task_count(), 5u);

  options_.resume = true;  // and force: contradictory
  EXPECT_THROW(run(plan, hook(0us)), AgreedInputError);
}

TEST_F(RunPlanTest, ResumeRunsOnlyFailedAndPendingTasks) {
  const sweep::Plan plan = hook_plan(30, "resume");
  EXPECT_EQ(run(plan, hook(0us, {4, 5, 29})).exit_code, exit_code::tasks_failed);

  options_.resume = true;
  auto calls = std::make_shared<std::vector<std::uint64_t>>();
  const RunResult result = run(plan, [calls](const sweep::Task& task) {
    calls->push_back(task.id);
    return qsweep::testing::fake_result(task);
  });
  EXPECT_EQ(result.exit_code, exit_code::ok);
  std::sort(calls->begin(), calls->end());
  EXPECT_EQ(*calls, (std::vector<std::uint64_t>{4, 5, 29}));
  const store::ResultsReader reader(options_.output);
  const std::vector<std::int32_t> attempts = reader.attempts();
  for (std::uint64_t id = 0; id < 30; ++id) {
    EXPECT_EQ(attempts[id], (id == 4 || id == 5 || id == 29) ? 2 : 1) << id;
  }
  EXPECT_EQ(stored_EQ()[5], 2.0 * plan.tasks[5].system().lambda);

  // Resume of a finished file runs nothing.
  calls->clear();
  EXPECT_EQ(run(plan,
                [calls](const sweep::Task& task) {
                  calls->push_back(task.id);
                  return qsweep::testing::fake_result(task);
                })
                .exit_code,
            exit_code::ok);
  EXPECT_TRUE(calls->empty());
}

TEST_F(RunPlanTest, ResumeRefusesAFileOfAnotherPlan) {
  EXPECT_EQ(run(hook_plan(10, "first"), hook(0us)).exit_code, exit_code::ok);
  options_.resume = true;
  try {
    run(hook_plan(11, "first"), hook(0us));
    FAIL() << "resumed another plan";
  } catch (const AgreedInputError& e) {
    EXPECT_NE(std::string(e.what()).find("different plan"), std::string::npos) << e.what();
  }
}

TEST_F(RunPlanTest, ResumeStartsAFileThatDoesNotExist) {
  options_.resume = true;
  EXPECT_EQ(run(hook_plan(3, "fresh"), hook(0us)).exit_code, exit_code::ok);
}

TEST_F(RunPlanTest, Usr1DrainsThenResumeFinishes) {
  // 2 ms tasks (batches of ~25 once calibrated); SIGUSR1 arrives during task 100.
  const sweep::Plan plan = hook_plan(400, "drain");
  const RunResult stopped = run(plan, hook(2ms, {}, SIGUSR1, 100));
  EXPECT_EQ(stopped.exit_code, exit_code::incomplete);
  EXPECT_FALSE(stopped.left_task_running);
  {
    const store::ResultsReader reader(options_.output);
    const std::vector<TaskStatus> statuses = reader.statuses();
    const std::vector<std::int32_t> attempts = reader.attempts();
    EXPECT_EQ(statuses[100], TaskStatus::done);  // the running batch finished
    std::size_t done = 0;
    for (std::uint64_t id = 0; id < statuses.size(); ++id) {
      // Drained: every task handed out finished; the rest were never started.
      if (statuses[id] == TaskStatus::done) {
        ++done;
        EXPECT_EQ(attempts[id], 1);
      } else {
        EXPECT_EQ(attempts[id], 0) << id;
      }
    }
    EXPECT_EQ(done, stopped.counts.done);
    EXPECT_LT(done, 400u);
  }
  options_.resume = true;
  const RunResult resumed = run(plan, hook(0us));
  EXPECT_EQ(resumed.exit_code, exit_code::ok);
  for (const std::int32_t attempts : store::ResultsReader(options_.output).attempts()) {
    EXPECT_EQ(attempts, 1);
  }
}

TEST_F(RunPlanTest, AStopRequestedDuringStartUpRunsNoTask) {
  // `qsweep run` watches signals from its first instruction; a SIGUSR1 that came before the run
  // (while MPI started or the plan was parsed) is kept: no task starts, every task stays pending
  // in a complete file, and the run exits with "incomplete".
  const sweep::Plan plan = hook_plan(50, "early-stop");
  auto calls = std::make_shared<std::atomic<int>>(0);
  const TaskFunction counting = [calls](const sweep::Task& task) {
    ++*calls;
    return qsweep::testing::fake_result(task);
  };
  {
    const SignalWatch whole_process;
    raise(SIGUSR1);
    const RunResult stopped = run(plan, counting);
    EXPECT_EQ(stopped.exit_code, exit_code::incomplete);
    EXPECT_EQ(stopped.counts.done, 0u);
  }
  EXPECT_EQ(*calls, 0);
  {
    const store::ResultsReader reader(options_.output);
    for (const TaskStatus status : reader.statuses()) EXPECT_EQ(status, TaskStatus::pending);
    for (const std::int32_t attempts : reader.attempts()) EXPECT_EQ(attempts, 0);
  }
  options_.resume = true;
  EXPECT_EQ(run(plan, counting).exit_code, exit_code::ok);
  EXPECT_EQ(*calls, 50);
}

TEST_F(RunPlanTest, TermAbandonsTheRunningTaskWhichStaysPending) {
  // Task 50 gets SIGTERM and then runs until the test lets it go: the run must return without
  // waiting for it (the gate would keep it a minute).
  const sweep::Plan plan = hook_plan(200, "stop-now");
  const auto gate = std::make_shared<qsweep::testing::Gate>();
  const RunResult stopped = run(plan, qsweep::testing::signal_then_gate(SIGTERM, 50, gate));
  EXPECT_TRUE(gate->entered());
  EXPECT_FALSE(gate->passed_through());  // task 50 is still running
  gate->open();                          // the abandoned task ends; its outcome is dropped
  EXPECT_EQ(stopped.exit_code, exit_code::incomplete);
  EXPECT_TRUE(stopped.left_task_running);
  {
    const store::ResultsReader reader(options_.output);
    EXPECT_EQ(reader.statuses()[50], TaskStatus::pending);
    EXPECT_EQ(reader.attempts()[50], 1);  // it was handed out: the attempts column shows it
  }
  options_.resume = true;
  EXPECT_EQ(run(plan, hook(0us)).exit_code, exit_code::ok);
  const store::ResultsReader reader(options_.output);
  EXPECT_EQ(reader.attempts()[50], 2);
  EXPECT_EQ(reader.statuses()[50], TaskStatus::done);
}

TEST_F(RunPlanTest, OutputFromTheSweepFileAndMissingOutput) {
  sweep::Plan plan = hook_plan(2, "output");
  plan.output = (dir_ / "from-yaml.h5").string();
  options_.output.clear();
  EXPECT_EQ(run(plan, hook(0us)).exit_code, exit_code::ok);
  EXPECT_TRUE(fs::exists(plan.output));
  plan.output.clear();
  EXPECT_THROW(run(plan, hook(0us)), AgreedInputError);
}

}  // namespace
}  // namespace qsweep::run
