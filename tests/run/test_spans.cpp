// Choosing the ranks of tasks that span ranks (run/spans.hpp) from sweep files: `ranks: auto`
// takes the fewest whose share fits, a task that cannot span stays on one rank, and what cannot
// be met is refused with the task's place.
#include <gtest/gtest.h>

#include <string>

#include "qsweep/common/error.hpp"
#include "qsweep/exact/distributed_memory.hpp"
#include "qsweep/run/spans.hpp"

namespace qsweep::run {
namespace {

// One exact task with N = 20 (2^20 unions on the general engine).
sweep::Plan plan_of(const std::string& ranks,
                    const std::string& family = "random_regular\n    degree: 3") {
  return sweep::parse_plan("name: spans\nblocks:\n  - method: exact\n    family: " + family +
                               "\n    N: 20\n    lambda: 0.5\n    ranks: " + ranks + "\n",
                           "spans.yaml");
}

double share(const sweep::Task& task, int ranks) {
  return sweep::memory_per_rank(task, ranks).value().bytes;
}

TEST(ChooseSpans, AutoTakesTheFewestRanksWhoseShareFits) {
  const sweep::Plan plan = plan_of("auto");
  const sweep::Task& task = plan.tasks.front();
  ASSERT_GT(share(task, 2), share(task, 3));
  sweep::MemoryLimit limit;
  limit.baseline_bytes = 50e6;
  limit.bytes = limit.baseline_bytes + share(task, 3);
  const auto spans = choose_spans(plan, limit, 5);
  ASSERT_EQ(spans.count(0), 1u);
  EXPECT_EQ(spans.at(0).ranks, 3);
  EXPECT_EQ(spans.at(0).memory, share(task, 3));
  // With room for the whole task on one rank, it runs on one like any other.
  limit.bytes = limit.baseline_bytes + sweep::estimate_cost(task).memory.bytes;
  EXPECT_TRUE(choose_spans(plan, limit, 5).empty());
}

TEST(ChooseSpans, TheShareIsTheDistributedEnginesPeakOnTheBusiestRank) {
  const sweep::Plan plan = plan_of("2");
  const sweep::Task& task = plan.tasks.front();
  const std::size_t types = 30;  // the edges of a 3-regular graph on 20 servers
  const auto peak = [&](int ranks) {
    return exact::distributed::peak_bytes_per_rank(20, types, ranks, 0, true);
  };
  EXPECT_GT(share(task, 2), share(task, 4));
  // Beside the engine: the speeds and the family's lists, the same on any number of ranks.
  const double around = share(task, 2) - peak(2);
  EXPECT_GT(around, 0.0);
  EXPECT_LT(around, 1 << 20);
  EXPECT_NEAR(share(task, 4) - peak(4), around, 1.0);
}

TEST(ChooseSpans, AboveTheSingleRankEnginesLimitAtLeastTwoRanks) {
  const sweep::Plan plan = sweep::parse_plan(
      "name: big\nblocks:\n  - method: exact\n    family: random_regular\n    degree: 3\n"
      "    N: 32\n    lambda: 0.5\n    ranks: auto\n",
      "big.yaml");
  const sweep::Task& task = plan.tasks.front();
  EXPECT_FALSE(sweep::memory_per_rank(task, 1).has_value());
  sweep::MemoryLimit limit;
  limit.bytes = 1e15;
  EXPECT_EQ(choose_spans(plan, limit, 8).at(0).ranks, 2);
  // 2^32 unions x 24 B / 8 ranks = 12 GiB and a little: auto takes 8 ranks for a 13 GiB budget.
  limit.bytes = 13.0 * (1 << 30);
  EXPECT_EQ(choose_spans(plan, limit, 8).at(0).ranks, 8);
  EXPECT_THROW(choose_spans(plan, limit, 7), InputError);
  EXPECT_THROW(choose_spans(plan, limit, 1), InputError);
}

TEST(ChooseSpans, AutoOnAnEngineThatCannotSpanStaysOnOneRank) {
  const sweep::Plan plan = plan_of("auto", "complete\n    d: 2");
  ASSERT_FALSE(sweep::memory_per_rank(plan.tasks.front(), 2).has_value());
  sweep::MemoryLimit limit;
  limit.bytes = 1e12;
  EXPECT_TRUE(choose_spans(plan, limit, 5).empty());
}

TEST(ChooseSpans, MoreRanksThanTheRunHasAreRefusedAtTheBlock) {
  const sweep::Plan plan = plan_of("4");
  sweep::MemoryLimit limit;
  limit.bytes = 1e12;
  try {
    choose_spans(plan, limit, 3);
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("spans.yaml:3:5: task 0 ", 0), 0u) << message;
    EXPECT_NE(message.find("asks for 4 ranks and this run has 3"), std::string::npos) << message;
  }
  EXPECT_EQ(choose_spans(plan, limit, 4).at(0).ranks, 4);
}

TEST(ChooseSpans, AShareThatDoesNotFitIsRefused) {
  const sweep::Plan plan = plan_of("2");
  sweep::MemoryLimit limit;
  limit.bytes = share(plan.tasks.front(), 2) - 1.0;
  limit.source = "--max-task-memory X";
  try {
    choose_spans(plan, limit, 8);
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("per rank"), std::string::npos) << message;
    EXPECT_NE(message.find("on 2 ranks"), std::string::npos) << message;
    EXPECT_NE(message.find("--max-task-memory X"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace qsweep::run
