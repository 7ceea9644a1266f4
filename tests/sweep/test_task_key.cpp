// Task keys (sweep::task_key), by which random streams are keyed and growing a results file and
// `qsweep merge` match tasks: equal for the same computation wherever it sits (another block,
// another id, random methods too), different for another parameter or seed; a plan holds each key
// once. And the joined sweep of a merged file expands to the tasks of both.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <set>
#include <string>

#include "qsweep/sweep/plan.hpp"

namespace qsweep::sweep {
namespace {

const char* const kExact = R"(  - method: exact
    family: ring
    N: 4
    lambda: [0.3, 0.6]
    qmax: 5
)";
const char* const kSimulate = R"(  - method: simulate
    family: ring
    N: 4
    lambda: 0.5
    horizon: 100
    warmup: 10
    replications: 2
)";

Plan plan_of(const std::string& blocks, const std::string& seed = "3") {
  return parse_plan("name: key-test\nseed: " + seed + "\nblocks:\n" + blocks, "t.yaml");
}

TEST(TaskKey, SameComputationSameKeyWhereverItSits) {
  const Plan a = plan_of(std::string(kExact) + kSimulate);
  const Plan b = plan_of(std::string(kSimulate) + kExact);  // exact moves to ids 1, 2, block 1
  ASSERT_EQ(a.tasks.size(), 3U);
  EXPECT_EQ(task_key(a.tasks[0]), task_key(b.tasks[1]));
  EXPECT_EQ(task_key(a.tasks[1]), task_key(b.tasks[2]));
  EXPECT_NE(task_key(a.tasks[0]), task_key(a.tasks[1]));  // another lambda
  // The simulate task moved from id 2 to 0: the same key, the same streams.
  EXPECT_EQ(task_key(a.tasks[2]), task_key(b.tasks[0]));
  EXPECT_EQ(stream_key(a.tasks[2]), stream_key(b.tasks[0]));
  EXPECT_EQ(task_key(a.tasks[2]).size(), 32U);
  EXPECT_EQ(fmt::format("{:016x}{:016x}", stream_key(a.tasks[2])[0], stream_key(a.tasks[2])[1]),
            task_key(a.tasks[2]));
  // Another seed is another task, for every method.
  const Plan c = plan_of(std::string(kExact) + kSimulate, "4");
  for (std::size_t i = 0; i < a.tasks.size(); ++i)
    EXPECT_NE(task_key(a.tasks[i]), task_key(c.tasks[i])) << i;
}

// common_random_numbers: tasks that differ only in a listed key share their stream key, while
// their task keys (what they compute) stay apart; a key not listed still separates the streams,
// and a task without the list keys its streams by its task key, as before.
TEST(TaskKey, CommonRandomNumbersShareTheStreamKeyOnly) {
  const std::string block = R"(  - method: simulate
    family: complete
    N: 6
    d: 6
    lambda: [0.5, 0.7]
    policy: [power_of_d, jsq]
    policy_d: [2, 3]
    horizon: 100
    replications: 2
)";
  const Plan common = plan_of(block + "    common_random_numbers: [policy, policy_d]\n");
  const Plan plain = plan_of(block);
  ASSERT_EQ(common.tasks.size(), 6U);  // per lambda: power_of_d 2, 3 and jsq
  ASSERT_EQ(plain.tasks.size(), 6U);
  for (std::size_t i = 0; i < common.tasks.size(); ++i) {
    const Task& t = common.tasks[i];
    for (std::size_t j = 0; j < common.tasks.size(); ++j) {
      const Task& u = common.tasks[j];
      const bool same_lambda = t.system().lambda == u.system().lambda;
      EXPECT_EQ(stream_key(t) == stream_key(u), same_lambda) << i << " " << j;
      EXPECT_EQ(task_key(t) == task_key(u), i == j) << i << " " << j;
    }
    EXPECT_NE(task_key(t), task_key(plain.tasks[i]));  // the list is part of what it computes
    EXPECT_EQ(
        fmt::format("{:016x}{:016x}", stream_key(plain.tasks[i])[0], stream_key(plain.tasks[i])[1]),
        task_key(plain.tasks[i]));
  }
  // Only policy_d listed: power_of_d 2 and 3 share, jsq keeps its own streams.
  const Plan some = plan_of(block + "    common_random_numbers: [policy_d]\n");
  std::set<std::array<std::uint64_t, 2>> streams;
  for (const Task& t : some.tasks) streams.insert(stream_key(t));
  EXPECT_EQ(streams.size(), 4U);
}

TEST(TaskKey, APlanHoldsEachKeyOnce) {
  // The exact block twice, the second time with one value more: only that value is new.
  const std::string more =
      std::string(kExact).replace(std::string(kExact).find("0.6]"), 4, "0.45, 0.6]");
  const Plan plan = plan_of(std::string(kExact) + kSimulate + more + kSimulate);
  ASSERT_EQ(plan.tasks.size(), 4U);
  EXPECT_EQ(plan.duplicates, 3U);
  EXPECT_EQ(plan.tasks[3].block, 2);
  EXPECT_EQ(describe(plan.tasks[3]), "exact ring N=4 lambda=0.45 qmax=5");
  // Values inserted before a task keep its key, and so its numbers.
  const Plan before = plan_of(std::string(kExact) + kSimulate);
  EXPECT_EQ(task_key(before.tasks[2]), task_key(plan_of(more + kSimulate).tasks[3]));
}

TEST(TaskKey, ThePlanOfAFormatVersion2FileKeepsRepeatsOfEarlierBlocks) {
  // As plans were before tasks had keys: a task of an earlier block is kept again in its block
  // (a row of such a file).
  const std::string text =
      "name: key-test\nseed: 3\nblocks:\n" + std::string(kExact) +
      std::string(kExact).replace(std::string(kExact).find("0.3, 0.6"), 8, "0.6, 0.9");
  const Plan now = parse_plan(text, "t.yaml");
  const Plan then = parse_plan(text, "t.yaml", {}, BlockDuplicates::kept);
  ASSERT_EQ(now.tasks.size(), 3U);
  ASSERT_EQ(then.tasks.size(), 4U);
  EXPECT_EQ(task_key(then.tasks[1]), task_key(then.tasks[2]));  // lambda 0.6, blocks 0 and 1
  EXPECT_EQ(then.tasks[2].block, 1);
  EXPECT_EQ(describe(then.tasks[3]), "exact ring N=4 lambda=0.9 qmax=5");
  EXPECT_NE(now.hash, then.hash);
}

TEST(TaskKey, AJoinedSweepExpandsToBothPlans) {
  const Plan first = plan_of(kExact);
  const std::string second_text =
      "name: key-test\nseed: 3\noutput: x.h5\nmax_tasks: 10\nblocks:\n" + std::string(kExact) +
      kSimulate;
  const std::string joined = joined_sweep_text(first.yaml_text, second_text, {1}, "a comment");
  EXPECT_EQ(joined.rfind("# a comment", 0), 0U) << joined;
  EXPECT_EQ(joined.find("output"), std::string::npos) << joined;
  const Plan plan = parse_plan(joined, "joined.yaml");
  const Plan whole = plan_of(std::string(kExact) + kSimulate);
  EXPECT_EQ(plan.hash, whole.hash);
  EXPECT_NE(joined.find("max_tasks: 1000010"), std::string::npos) << joined;
}

}  // namespace
}  // namespace qsweep::sweep
