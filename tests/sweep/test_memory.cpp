// Memory estimates (sweep/cost.hpp) against the peak resident memory measured when the task runs
// in a child process of its own, for every method; memory sizes as given on a command line; the
// located refusal of a task that does not fit.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "qsweep/common/allocator.hpp"
#include "qsweep/common/error.hpp"
#include "qsweep/sweep/cost.hpp"
#include "qsweep/sweep/execute.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::sweep {
namespace {

constexpr double kMiB = 1 << 20;
// An estimate must lie within this factor of the measured peak (above the process's baseline).
constexpr double kLowest = 0.8, kHighest = 1.25;
// Allocator and page noise: below this a measurement says nothing about an estimate.
constexpr double kNoise = 16 * kMiB;

// AddressSanitizer's allocator (redzones, shadow memory, a quarantine of freed blocks) changes
// resident sizes: under it these comparisons would measure the sanitizer, not qsweep.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitizedAllocator = true;
#else
constexpr bool kSanitizedAllocator = false;
#endif
constexpr const char* kSanitizedReason =
    "resident sizes under AddressSanitizer are the sanitizer's";

// "Key:  123 kB" of /proc/self/status in bytes.
double status_bytes(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    double kib = 0.0;
    fields >> kib;
    return kib * 1024.0;
  }
  return -1.0;
}

// What a task adds to a process at its peak, measured as `qsweep eval` runs it: in a process of
// its own. This test program starts itself again (only MeasureOneTaskInThisProcess, told which
// case by kMeasureEnv), which sets the allocator as qsweep does, resets its peak resident size
// (5 > /proc/self/clear_refs) so that VmHWM - VmRSS before the task is the task's own, and writes
// it to a pipe. A forked child would run the task in the heap the parent left (here that made an
// ldp task's peak 30% larger than in any fresh process). -1: the peak cannot be reset here; -2:
// the task did not finish.
constexpr const char* kMeasureEnv = "QSWEEP_TEST_MEASURE_TASK";  // "LIST INDEX FD"

double measured_task_bytes(const std::string& list, std::size_t index) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return -1.0;
  const pid_t pid = fork();
  if (pid == 0) {
    close(pipe_fds[0]);
    const std::string spec = list + " " + std::to_string(index) + " " + std::to_string(pipe_fds[1]);
    setenv(kMeasureEnv, spec.c_str(), 1);
    const int quiet = open("/dev/null", O_WRONLY);
    if (quiet >= 0) dup2(quiet, STDOUT_FILENO);
    execl("/proc/self/exe", "qsweep_test_sweep",
          "--gtest_filter=MemoryEstimate.MeasureOneTaskInThisProcess", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(pipe_fds[1]);
  double bytes = -1.0;
  if (read(pipe_fds[0], &bytes, sizeof bytes) != sizeof bytes) bytes = -2.0;
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return bytes;
}

struct Case {
  const char* name;
  std::vector<Flag> flags;  // as for `qsweep eval`
};

// Each large enough to be measured (a few tens to hundreds of MiB), each a second or less.
std::vector<Case> cases() {
  return {
      {"exact general",
       {{"family", "ring"}, {"N", "22"}, {"lambda", "0.5"}, {"per_type", "false"}}},
      {"exact general + pmf", {{"family", "ring"}, {"N", "22"}, {"lambda", "0.5"}, {"qmax", "20"}}},
      {"exact symmetric complete",
       {{"family", "complete"}, {"d", "30"}, {"N", "100000"}, {"lambda", "0.5"}}},
      {"exact symmetric independent",
       {{"family", "independent"}, {"N", "2000000"}, {"lambda", "0.5"}, {"qmax", "5"}}},
      {"exact symmetric singletons_full",
       {{"family", "singletons_full"}, {"eps", "0.5"}, {"N", "1000000"}, {"lambda", "0.5"}}},
      {"exact joint pmf",
       {{"family", "ring"},
        {"N", "3"},
        {"lambda", "0.5"},
        {"joint_qmax", "1000"},
        {"joint_bin", "11"}}},
      {"simulate jsq",
       {{"method", "simulate"},
        {"seed", "1"},
        {"policy", "jsq"},
        {"family", "complete"},
        {"d", "2"},
        {"N", "2000000"},  // the pooled kernel: its replication's 12 B per server at the peak
        {"lambda", "0.5"},
        {"horizon", "1"},
        {"warmup", "0"},
        {"replications", "2"},
        {"max_events", "1"}}},  // one round: the peak is a replication's, whatever its length
      {"simulate redundancy",
       {{"method", "simulate"},
        {"seed", "1"},
        {"policy", "redundancy_coc"},
        {"family", "ring"},
        {"N", "200000"},
        {"lambda", "0.5"},
        {"horizon", "1"},
        {"warmup", "0"},
        {"replications", "2"},
        {"max_events", "1"}}},  // one round: the peak is a replication's, whatever its length
      {"ldp exact chain j=3",
       {{"method", "ldp"},
        {"seed", "1"},
        {"estimator", "exact"},
        {"policy", "jiq"},
        {"n", "3000"},
        {"j", "3"},
        {"T", "0.01"},
        {"lambda", "1"}}},
      {"ldp exact chain j=4",
       {{"method", "ldp"},
        {"seed", "1"},
        {"estimator", "exact"},
        {"policy", "jiq"},
        {"n", "250"},
        {"j", "4"},
        {"T", "0.02"},
        {"lambda", "1"}}},
  };
}

// Tasks whose memory does not grow with the problem.
std::vector<Case> small_cases() {
  return {
      {"ldp importance",
       {{"method", "ldp"},
        {"seed", "1"},
        {"n", "10000"},
        {"j", "3"},
        {"T", "1"},
        {"samples", "200"},
        {"lambda", "1"}}},
      {"exact ring N=8", {{"family", "ring"}, {"N", "8"}, {"lambda", "0.5"}, {"qmax", "10"}}},
  };
}

// Run by measured_task_bytes in a process of its own; skipped otherwise.
TEST(MemoryEstimate, MeasureOneTaskInThisProcess) {
  const char* spec = std::getenv(kMeasureEnv);
  if (spec == nullptr) GTEST_SKIP() << "measures one task when the other tests start it";
  std::string list;
  std::size_t index = 0;
  int fd = -1;
  std::istringstream(spec) >> list >> index >> fd;
  const Task task =
      plan_from_flags((list == "large" ? cases() : small_cases()).at(index).flags).tasks.at(0);
  fix_malloc_mmap_threshold();
  // Free memory the planning left in the heap (resident) would hide the task's own.
  malloc_trim(0);
  double bytes = -1.0;
  const int clear = open("/proc/self/clear_refs", O_WRONLY);
  if (clear >= 0 && write(clear, "5", 1) == 1) {
    close(clear);
    const double before = status_bytes("VmRSS");
    if (status_bytes("VmHWM") <= before + kMiB) {
      const TaskOutcome outcome = execute(task);
      bytes = outcome.status == TaskStatus::done ? status_bytes("VmHWM") - before : -2.0;
    }
  }
  ASSERT_EQ(write(fd, &bytes, sizeof bytes), static_cast<ssize_t>(sizeof bytes));
}

TEST(MemoryEstimate, WithinAFactorOfTheMeasuredPeak) {
  if (kSanitizedAllocator) GTEST_SKIP() << kSanitizedReason;
  std::printf("%-34s %12s %12s %7s\n", "task", "estimate", "measured", "ratio");
  const std::vector<Case> all = cases();
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Case& c = all[i];
    const Plan plan = plan_from_flags(c.flags);
    const Task& task = plan.tasks.at(0);
    const double measured = measured_task_bytes("large", i);
    if (measured == -1.0) GTEST_SKIP() << "cannot reset the peak resident size here";
    ASSERT_GT(measured, 0.0) << c.name << ": the task did not finish";
    std::printf("%-34s %12s %12s %7.2f\n", c.name, memory_text(task.memory).c_str(),
                memory_text(measured).c_str(), task.memory / measured);
    EXPECT_GT(measured, kNoise) << c.name << ": too small to check an estimate";
    EXPECT_GE(task.memory, kLowest * measured)
        << c.name << ": " << estimate_cost(task).memory.formula;
    EXPECT_LE(task.memory, kHighest * measured)
        << c.name << ": " << estimate_cost(task).memory.formula;
  }
}

// Tasks whose memory does not grow with the problem: estimated small, measured small.
TEST(MemoryEstimate, SmallTasksStaySmall) {
  if (kSanitizedAllocator) GTEST_SKIP() << kSanitizedReason;
  const std::vector<Case> small = small_cases();
  for (std::size_t i = 0; i < small.size(); ++i) {
    const Case& c = small[i];
    const Task task = plan_from_flags(c.flags).tasks.at(0);
    const double measured = measured_task_bytes("small", i);
    if (measured == -1.0) GTEST_SKIP() << "cannot reset the peak resident size here";
    ASSERT_GT(measured, 0.0) << c.name;
    EXPECT_LT(task.memory, kNoise) << c.name;
    EXPECT_LT(measured, kNoise) << c.name;
  }
}
// The general engine's arrays, 2^(N+4) bytes, dominate its estimate: N = 28 is 4 GiB.
TEST(MemoryEstimate, GeneralEngineIsSixteenBytesPerServerSet) {
  for (const int N : {20, 24, 28}) {
    const Task task =
        plan_from_flags({{"family", "ring"}, {"N", std::to_string(N)}, {"lambda", "0.5"}})
            .tasks.at(0);
    EXPECT_GE(task.memory, std::ldexp(1.0, N + 4));
    EXPECT_LE(task.memory, 1.01 * std::ldexp(1.0, N + 4)) << N;
  }
}

TEST(MemoryEstimate, ThePlanCarriesTheEstimates) {
  const Plan plan = parse_plan(R"(name: carried
seed: 1
blocks:
  - {method: exact, family: [ring, complete], N: [6, 12], lambda: [0.5, 2.0]}
  - {method: simulate, family: ring, N: 50, lambda: 0.5, horizon: 10}
  - {method: ldp, n: [100, 200], j: 3, T: 1, estimator: exact, lambda: 1}
)",
                               "carried.yaml");
  std::vector<bool> unstable(plan.tasks.size(), false);
  for (const auto id : plan.unstable_tasks) unstable[id] = true;
  for (const Task& task : plan.tasks) {
    if (unstable[task.id]) {
      EXPECT_EQ(task.memory, 0.0);  // not run
      continue;
    }
    const MemoryEstimate estimate = estimate_cost(task).memory;
    EXPECT_EQ(task.memory, estimate.bytes) << describe(task);
    EXPECT_EQ(task.result_memory, estimate.result_bytes) << describe(task);
    EXPECT_GT(task.memory, 0.0) << describe(task);
    EXPECT_LE(task.result_memory, task.memory) << describe(task);
    EXPECT_FALSE(estimate.formula.empty());
  }
}

// Expansion keeps each system's sums (KnownSystem); the estimate of a task on its own makes them
// afresh: the two agree bit for bit, on equal and unequal speeds, listed and implicit families,
// pooled and other simulation kernels, several loads per system.
TEST(MemoryEstimate, ThePlanEstimatesAreThoseOfEachTaskOnItsOwn) {
  const char* sweeps[] = {
      R"(name: simulate
seed: 3
blocks:
  - method: simulate
    policy: [jsq, power_of_d, random, redundancy_coc, redundancy_cos]
    family: [complete, ring]
    d: 2
    N: [6, 20]
    lambda: [0.2, 0.7, 0.95]
    horizon: 10
  - method: simulate
    policy: [jsq, redundancy_coc]
    service: [exponential, hyperexponential]
    cv2: 4
    family: [complete, ring]
    d: 2
    N: [6, 20]
    speed_profile: [two_class, linear]
    fast: 3
    rho: [0.3, 0.9]
    horizon: 10
)",
      R"(name: exact
blocks:
  - method: exact
    family: [ring, complete, independent]
    N: [4, 9]
    rho: [0.2, 0.8, 1.5]
    qmax: [0, 5]
  - method: exact
    family: [ring, complete]
    N: [5, 8]
    speed_profile: [two_class, linear]
    fast: 2.5
    rho: [0.4, 0.9]
)",
      R"(name: mixed
seed: 5
blocks:
  - {method: exact, family: [ring, complete], N: [4, 10], lambda: [0.1, 0.6, 1.2], qmax: 3}
  - method: simulate
    policy: [jsq, power_of_d]
    family: [complete, ring]
    d: 2
    N: [8, 30]
    speed_profile: two_class
    fast: 2
    lambda: [0.1, 0.6, 1.2]
    horizon: 10
)"};
  for (const char* text : sweeps) {
    const Plan plan = parse_plan(text, "sums.yaml");
    ASSERT_GT(plan.tasks.size(), 20u);
    std::vector<bool> unstable(plan.tasks.size(), false);
    for (const auto id : plan.unstable_tasks) unstable[id] = true;
    for (std::uint64_t id = 0; id < plan.tasks.size(); ++id) {
      if (unstable[id]) continue;
      const Task task = plan.tasks[id];
      const TaskEstimate& stored = plan.tasks.estimate(id);
      const CostEstimate fresh = estimate_cost(task);
      EXPECT_EQ(stored.cost, fresh.seconds) << plan.name << ": " << describe(task);
      // The plan keeps bytes as floats (TaskEstimate): the estimate rounded to 7 digits.
      EXPECT_EQ(stored.memory, static_cast<float>(fresh.memory.bytes))
          << plan.name << ": " << describe(task);
      EXPECT_EQ(stored.result_memory, static_cast<float>(fresh.memory.result_bytes))
          << plan.name << ": " << describe(task);
    }
  }
}

TEST(MemorySize, BinaryUnits) {
  EXPECT_EQ(parse_memory_size("4G", "--x"), std::ldexp(4.0, 30));
  EXPECT_EQ(parse_memory_size("4g", "--x"), std::ldexp(4.0, 30));
  EXPECT_EQ(parse_memory_size("4GiB", "--x"), std::ldexp(4.0, 30));
  EXPECT_EQ(parse_memory_size("4GB", "--x"), std::ldexp(4.0, 30));
  EXPECT_EQ(parse_memory_size("512M", "--x"), std::ldexp(512.0, 20));
  EXPECT_EQ(parse_memory_size("1.5T", "--x"), std::ldexp(1.5, 40));
  EXPECT_EQ(parse_memory_size("64K", "--x"), 65536.0);
  EXPECT_EQ(parse_memory_size("1000", "--x"), 1000.0);
  EXPECT_EQ(parse_memory_size("1000B", "--x"), 1000.0);
}

TEST(MemorySize, BadSizesSayWhatIsExpected) {
  for (const char* bad : {"", "G", "4X", "4 G", "-4G", "0", "0.1", "4GG", "1e9", "4.5.1G",
                          "2000000P", "99999999T", "four"}) {
    try {
      parse_memory_size(bad, "--max-task-memory");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InputError& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind("--max-task-memory: '" + std::string(bad) + "'", 0), 0u) << message;
      EXPECT_NE(message.find("expected a memory size"), std::string::npos) << message;
    }
  }
}

TEST(MemorySize, Text) {
  EXPECT_EQ(memory_text(512), "512 B");
  EXPECT_EQ(memory_text(12 * 1024), "12.0 KiB");
  EXPECT_EQ(memory_text(256 * kMiB), "256 MiB");
  EXPECT_EQ(memory_text(std::ldexp(4.0, 30)), "4.00 GiB");
}

TEST(MemoryLimit, RefusesTheFirstTaskOverItAtItsBlock) {
  const Plan plan = parse_plan(R"(name: limit
blocks:
  - method: exact
    family: ring
    N: 8
    lambda: 0.5
  - method: exact
    family: ring
    N: [20, 21, 22]
    lambda: 0.5
)",
                               "limit.yaml");
  ASSERT_EQ(plan.block_locations.size(), 2u);
  MemoryLimit limit;
  limit.baseline_bytes = 10 * kMiB;
  limit.source = "--max-task-memory 20.0 MiB";
  limit.bytes = 20 * kMiB + limit.baseline_bytes;  // N = 20 needs 16 MiB and fits
  try {
    check_task_memory(plan, limit);
    ADD_FAILURE() << "N = 21 and 22 were accepted";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(plan.block_locations[1] + ": task 2 ", 0), 0u) << message;
    EXPECT_EQ(plan.block_locations[1].rfind("limit.yaml:", 0), 0u);
    EXPECT_NE(message.find("N=21"), std::string::npos) << message;
    EXPECT_NE(message.find("more than --max-task-memory 20.0 MiB"), std::string::npos) << message;
    EXPECT_NE(message.find("10.0 MiB its process holds"), std::string::npos) << message;
    EXPECT_NE(message.find("1 more tasks"), std::string::npos) << message;
    // The general engine can spread the task over ranks.
    EXPECT_NE(message.find("`ranks: auto` in its block"), std::string::npos) << message;
  }
  limit.bytes = 70 * kMiB + limit.baseline_bytes;  // N = 22: 64 MiB
  EXPECT_NO_THROW(check_task_memory(plan, limit));
}

TEST(MemoryLimit, SuggestsRanksOnlyForTasksThatCanSpanRanks) {
  const Plan plan = parse_plan(R"(name: limit
seed: 1
blocks:
  - method: simulate
    family: complete
    d: 2
    policy: jsq
    N: 1000000
    lambda: 0.5
    horizon: 1
)",
                               "limit.yaml");
  MemoryLimit limit;
  limit.source = "--max-task-memory 1.00 MiB";
  limit.bytes = kMiB;
  try {
    check_task_memory(plan, limit);
    ADD_FAILURE() << "N = 1e6 was accepted";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("more than --max-task-memory 1.00 MiB"), std::string::npos) << message;
    EXPECT_EQ(message.find("ranks: auto"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace qsweep::sweep
