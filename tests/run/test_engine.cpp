// The compute thread and stop signals.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <thread>

#include "hook_plan.hpp"
#include "qsweep/exact/lattice_array.hpp"
#include "qsweep/run/engine.hpp"
#include "qsweep/run/memory.hpp"
#include "qsweep/run/signals.hpp"

namespace qsweep::run {
namespace {

using namespace std::chrono_literals;
using qsweep::testing::Gate;

std::vector<sweep::Task> tasks(std::size_t n) {
  std::vector<sweep::Task> batch(n);
  for (std::size_t i = 0; i < n; ++i) batch[i].id = 10 + i;
  return batch;
}

sweep::TaskOutcome done_after(std::chrono::milliseconds pause) {
  std::this_thread::sleep_for(pause);
  return sweep::TaskOutcome{TaskStatus::done, "", {}, 0.0, {}};
}

std::vector<FinishedTask> run_batch(Engine& engine, std::vector<sweep::Task> batch) {
  engine.start(std::move(batch));
  EXPECT_TRUE(engine.busy());
  while (!engine.wait(std::chrono::microseconds(100'000))) {
  }
  return engine.take();
}

TEST(Engine, RunsABatchInOrderAndTimesEachTask) {
  Engine engine([](const sweep::Task&) { return done_after(20ms); }, 7);
  const auto finished = run_batch(engine, tasks(3));
  EXPECT_FALSE(engine.busy());
  ASSERT_EQ(finished.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(finished[i].id, 10 + i);
    EXPECT_EQ(finished[i].rank, 7);
    EXPECT_EQ(finished[i].outcome.status, TaskStatus::done);
    EXPECT_GE(finished[i].outcome.wall_seconds, 0.020);
  }
  // The engine takes the next batch.
  EXPECT_EQ(run_batch(engine, tasks(1)).size(), 1u);
}

TEST(Engine, ExceptionsBecomeFailedTasksAndTheBatchGoesOn) {
  Engine engine(
      [](const sweep::Task& task) -> sweep::TaskOutcome {
        if (task.id == 10) throw std::runtime_error("no convergence at lambda = 0.9");
        if (task.id == 11) throw 42;
        if (task.id == 12) return sweep::TaskOutcome{};  // pending: nothing was computed
        return done_after(0ms);
      },
      0);
  const auto finished = run_batch(engine, tasks(4));
  ASSERT_EQ(finished.size(), 4u);
  EXPECT_EQ(finished[0].outcome.status, TaskStatus::failed);
  EXPECT_EQ(finished[0].outcome.error, "no convergence at lambda = 0.9");
  EXPECT_EQ(finished[1].outcome.error, "unknown exception");
  EXPECT_EQ(finished[2].outcome.status, TaskStatus::failed);
  EXPECT_EQ(finished[2].outcome.error, "task returned no result");
  EXPECT_EQ(finished[3].outcome.status, TaskStatus::done);
}

// The exact general engine's block (exact/lattice_array.hpp) stays kept from one task to the
// next while the Engine lives, only into an exact task estimated at least as large; the rank's
// resident size as its baseline leaves it out.
TEST(Engine, KeepsTheExactBlockOnlyForAnExactTaskAsLarge) {
  constexpr std::size_t kBlock = std::size_t{64} << 20;
  std::vector<std::size_t> kept_at_start;  // exact::kept_block_bytes() as each task starts
  {
    Engine engine(
        [&](const sweep::Task& task) {
          kept_at_start.push_back(exact::kept_block_bytes());
          if (task.method() == sweep::Method::exact) {  // as the general engine: map, write, keep
            exact::ZeroedMemory block(kBlock);
            std::memset(block.data(), 1, kBlock);
            exact::keep_zeroed_block(std::move(block));
          }
          return done_after(0ms);
        },
        0);
    std::vector<sweep::Task> batch = tasks(5);
    const double large = static_cast<double>(kBlock) + 1e6;
    for (sweep::Task& task : batch) task.memory = large;
    batch[2].memory = static_cast<double>(kBlock) / 2;  // exact, smaller than the kept block
    batch[3].params = sweep::SimulateTask{};
    run_batch(engine, batch);
    EXPECT_EQ(kept_at_start, (std::vector<std::size_t>{0, kBlock, 0, 0, 0}));
    ASSERT_EQ(exact::kept_block_bytes(), kBlock);
    EXPECT_EQ(exact::kept_block_resident_bytes(), kBlock);
    // VmRSS (statm, in pages) holds the kept block; the baseline does not.
    std::FILE* statm = std::fopen("/proc/self/statm", "r");
    ASSERT_NE(statm, nullptr);
    unsigned long long size = 0, pages = 0;
    ASSERT_EQ(std::fscanf(statm, "%llu %llu", &size, &pages), 2);
    std::fclose(statm);
    const double rss = static_cast<double>(pages) * static_cast<double>(sysconf(_SC_PAGESIZE));
    EXPECT_NEAR(rss - resident_bytes(), static_cast<double>(kBlock), 1 << 20);
  }
  EXPECT_EQ(exact::kept_block_bytes(), 0U);  // released with the Engine
}

// A task that runs until the test opens the gate.
sweep::TaskOutcome done_at(Gate& gate) {
  gate.pass();
  return done_after(0ms);
}

TEST(Engine, WaitTimesOutWhileATaskRuns) {
  auto gate = std::make_shared<Gate>();
  Engine engine([gate](const sweep::Task&) { return done_at(*gate); }, 0);
  engine.start(tasks(1));
  gate->wait_entered();
  EXPECT_FALSE(engine.wait(std::chrono::microseconds(20'000)));
  EXPECT_THROW(engine.take(), std::logic_error);
  EXPECT_THROW(engine.start(tasks(1)), std::logic_error);
  gate->open();
  while (!engine.wait(std::chrono::microseconds(100'000))) {
  }
  EXPECT_EQ(engine.take().size(), 1u);
}

TEST(Engine, AbandonKeepsWhatFinishedAndDoesNotWaitForTheRest) {
  // Task 10 is quick, task 11 runs until the test lets it go: abandoning during task 11 returns
  // with task 10 while task 11 is still running.
  auto gate = std::make_shared<Gate>();
  Engine engine(
      [gate](const sweep::Task& task) { return task.id == 10 ? done_after(0ms) : done_at(*gate); },
      0);
  engine.start(tasks(3));
  gate->wait_entered();  // task 11 is running now
  const auto finished = engine.abandon();
  EXPECT_FALSE(gate->passed_through());  // the abandon did not wait for it
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0].id, 10u);
  EXPECT_TRUE(engine.left_task_running());
  EXPECT_FALSE(engine.busy());
  EXPECT_THROW(engine.start(tasks(1)), std::logic_error);
  gate->open();
}

TEST(Engine, AbandonBetweenBatchesJoinsTheThread) {
  Engine engine([](const sweep::Task&) { return done_after(0ms); }, 0);
  run_batch(engine, tasks(2));
  EXPECT_TRUE(engine.abandon().empty());
  EXPECT_FALSE(engine.left_task_running());
}

TEST(SignalWatch, Usr1DrainsTermAndIntStopNow) {
  {
    const SignalWatch watch;
    EXPECT_EQ(watch.requested(), StopMode::none);
    raise(SIGUSR1);
    EXPECT_EQ(watch.requested(), StopMode::drain);
    raise(SIGUSR1);
    EXPECT_EQ(watch.requested(), StopMode::now);
  }
  {
    const SignalWatch watch;
    EXPECT_EQ(watch.requested(), StopMode::none);
    raise(SIGTERM);
    EXPECT_EQ(watch.requested(), StopMode::now);
    raise(SIGUSR1);
    EXPECT_EQ(watch.requested(), StopMode::now);
  }
  {
    const SignalWatch watch;
    raise(SIGINT);
    EXPECT_EQ(watch.requested(), StopMode::now);
  }
  // The previous dispositions are back.
  struct sigaction action {};
  sigaction(SIGTERM, nullptr, &action);
  EXPECT_EQ(action.sa_handler, SIG_DFL);
}

TEST(SignalWatch, NestedWatchesSeeEarlierRequests) {
  // Not necessarily SIG_DFL: MPICH installs a SIGUSR1 handler of its own in MPI_Init.
  struct sigaction before {};
  sigaction(SIGUSR1, nullptr, &before);
  {
    const SignalWatch outer;  // as `qsweep run` holds one from its start
    raise(SIGUSR1);           // during start-up
    {
      const SignalWatch inner;  // as run_plan holds one for the run
      EXPECT_EQ(inner.requested(), StopMode::drain);
    }
    // The inner watch is gone, the handlers are not: a second SIGUSR1 is still caught.
    raise(SIGUSR1);
    EXPECT_EQ(outer.requested(), StopMode::now);
  }
  struct sigaction action {};
  sigaction(SIGUSR1, nullptr, &action);
  EXPECT_EQ(action.sa_handler, before.sa_handler);
  // A new outermost watch starts without the old request.
  const SignalWatch watch;
  EXPECT_EQ(watch.requested(), StopMode::none);
}

TEST(SignalWatch, ASecondStopNowEndsTheProcess) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const SignalWatch watch;
    raise(SIGINT);  // stop now: handled
    raise(SIGINT);  // again: default action, the process ends here
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGINT);
}

}  // namespace
}  // namespace qsweep::run
