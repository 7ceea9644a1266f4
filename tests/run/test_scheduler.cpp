// Scheduling: biggest estimated cost first, batches by cost budget, attempts counted.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>
#include <cmath>
#include <sstream>

#include "qsweep/common/error.hpp"
#include "qsweep/run/scheduler.hpp"

namespace qsweep::run {
namespace {

sweep::Plan plan_with_costs(const std::vector<double>& costs) {
  sweep::Plan plan;
  for (std::size_t i = 0; i < costs.size(); ++i) {
    sweep::Task task;
    task.id = i;
    task.cost = costs[i];
    plan.tasks.push_back(task);
  }
  return plan;
}

std::vector<std::uint64_t> all_ids(std::size_t n) {
  std::vector<std::uint64_t> ids(n);
  for (std::size_t i = 0; i < n; ++i) ids[i] = i;
  return ids;
}

TEST(Shards, LargestFirstToTheLeastLoadedShard) {
  // 8 -> 0, 7 -> 1, 6 -> 2 (the first of equal loads), 5 -> 2, 4 -> 1, 2 -> 0, 1 -> 0: 11 each.
  const sweep::Plan plan = plan_with_costs({1.0, 8.0, 2.0, 7.0, 6.0, 5.0, 4.0});
  const std::vector<std::uint32_t> shard = shard_of_tasks(plan, 3);
  EXPECT_EQ(shard, (std::vector<std::uint32_t>{0, 0, 0, 1, 2, 2, 1}));
  EXPECT_EQ(shard_of_tasks(plan, 1), std::vector<std::uint32_t>(7, 0));
  // More shards than tasks: the rest are empty.
  EXPECT_EQ(shard_of_tasks(plan, 9), (std::vector<std::uint32_t>{6, 0, 5, 1, 2, 3, 4}));
}

TEST(Shards, IAndKAreRead) {
  const Shard shard = parse_shard("2/5");
  EXPECT_EQ(shard.index, 2U);
  EXPECT_EQ(shard.count, 5U);
  for (const char* bad : {"0/3", "4/3", "3", "a/b", "1/0", "1/3x", "/3", "-1/3", "1/2000000"})
    EXPECT_THROW(parse_shard(bad), InputError) << bad;
}

TEST(Scheduler, HandsOutBiggestFirstTiesByIdOneEach) {
  const sweep::Plan plan = plan_with_costs({1.0, 5.0, 1.0, 3.0, 5.0});
  Scheduler scheduler(plan, all_ids(5), std::vector<std::uint64_t>(5, 0));
  std::vector<std::uint64_t> order;
  while (!scheduler.empty()) {
    const Batch batch = scheduler.next(0.0, 10);  // budget 0: one task per batch
    ASSERT_EQ(batch.ids.size(), 1u);
    order.push_back(batch.ids[0]);
  }
  EXPECT_EQ(order, (std::vector<std::uint64_t>{1, 4, 3, 0, 2}));
}

TEST(Scheduler, CostsWithinAFactorOfTwoGoInTaskOrder) {
  // 6 and 5 share [4, 8); 3 and 2 share [2, 4); 1.5 is in [1, 2); so are 1 and 1.9.
  const sweep::Plan plan = plan_with_costs({1.5, 6.0, 3.0, 5.0, 2.0, 1.0, 1.9});
  Scheduler scheduler(plan, all_ids(7), std::vector<std::uint64_t>(7, 0));
  std::vector<std::uint64_t> order;
  while (!scheduler.empty()) order.push_back(scheduler.next(0.0, 1).ids.at(0));
  EXPECT_EQ(order, (std::vector<std::uint64_t>{1, 3, 2, 4, 0, 5, 6}));
}

TEST(Scheduler, PacksTasksUpToTheBudgetAndTheTaskLimit) {
  const sweep::Plan plan = plan_with_costs({4.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0});
  Scheduler scheduler(plan, all_ids(7), std::vector<std::uint64_t>(7, 0));
  const double expected_total = 10.0 + 7 * scheduling_cost(sweep::TaskEstimate{});
  EXPECT_NEAR(scheduler.remaining_cost(), expected_total, 1e-9);
  // The big task is over budget: it goes alone.
  EXPECT_EQ(scheduler.next(2.5, 10).ids, std::vector<std::uint64_t>{0});
  // Two unit tasks fit 2.5, a third would not.
  EXPECT_EQ(scheduler.next(2.5, 10).ids, (std::vector<std::uint64_t>{1, 2}));
  // The task limit binds before the budget.
  EXPECT_EQ(scheduler.next(100.0, 3).ids, (std::vector<std::uint64_t>{3, 4, 5}));
  EXPECT_EQ(scheduler.remaining_tasks(), 1u);
  EXPECT_NEAR(scheduler.remaining_cost(), scheduling_cost(plan.tasks.estimate(6)), 1e-12);
  EXPECT_EQ(scheduler.next(100.0, 3).ids, std::vector<std::uint64_t>{6});
  EXPECT_TRUE(scheduler.empty());
  EXPECT_EQ(scheduler.remaining_cost(), 0.0);
  EXPECT_TRUE(scheduler.next(100.0, 3).ids.empty());
}

TEST(Scheduler, CountsAttemptsOnTopOfEarlierRuns) {
  const sweep::Plan plan = plan_with_costs({1.0, 1.0, 1.0});
  // A resumed file: task 1 was handed out twice before, task 2 once; task 0 is done.
  Scheduler scheduler(plan, std::vector<std::uint64_t>{1, 2}, std::vector<std::uint64_t>{1, 2, 1});
  const Batch batch = scheduler.next(100.0, 10);
  EXPECT_EQ(batch.ids, (std::vector<std::uint64_t>{1, 2}));
  EXPECT_EQ(batch.attempts, (std::vector<std::int32_t>{3, 2}));
  EXPECT_NEAR(scheduler.cost_of(batch), 2.0 + 2 * scheduling_cost(sweep::TaskEstimate{}), 1e-12);
}

TEST(Scheduler, TakesTheTasksAscending) {
  const sweep::Plan plan = plan_with_costs({1.0, 1.0, 1.0});
  EXPECT_THROW(Scheduler(plan, std::vector<std::uint64_t>{2, 1}, std::vector<std::uint64_t>(3, 0)),
               std::logic_error);
}

TEST(Scheduler, ZeroAndInvalidCostsStillCount) {
  sweep::TaskEstimate task;
  task.cost = 0.0;
  EXPECT_GT(scheduling_cost(task), 0.0);
  task.cost = std::nan("");
  EXPECT_EQ(scheduling_cost(task), scheduling_cost(sweep::TaskEstimate{}));
  task.cost = -3.0;
  EXPECT_EQ(scheduling_cost(task), scheduling_cost(sweep::TaskEstimate{}));
}

TEST(Batch, RoundTripsThroughBoostSerialization) {
  const Batch batch{{7, 3, 1'000'000'000'000ULL}, {1, 2, 30}};
  std::stringstream stream;
  {
    boost::archive::binary_oarchive out(stream);
    out << batch;
  }
  Batch read;
  boost::archive::binary_iarchive in(stream);
  in >> read;
  EXPECT_EQ(read, batch);
  EXPECT_NE(read, Batch{});
}

TEST(Batch, RunsOfConsecutiveIdsTravelAsAFewBytes) {
  Batch batch;
  for (std::uint64_t id = 5000; id < 6024; ++id) {
    batch.ids.push_back(id);
    batch.attempts.push_back(id < 5500 ? 1 : 2);  // two runs: attempts change at 5500
  }
  batch.ids.push_back(17);  // a third run: not consecutive
  batch.attempts.push_back(2);
  std::stringstream stream;
  {
    boost::archive::binary_oarchive out(stream);
    out << batch;
  }
  EXPECT_LT(stream.str().size(), 200u);  // 1025 ids and attempts would be 12 kB as they are
  Batch read;
  boost::archive::binary_iarchive in(stream);
  in >> read;
  EXPECT_EQ(read, batch);
}

TEST(BatchSizer, AimsAtTargetSecondsOnceCalibrated) {
  BatchSizer sizer(0.05, 256);
  EXPECT_EQ(sizer.max_tasks(), 256u);
  EXPECT_EQ(sizer.seconds_per_cost(), 1.0);
  EXPECT_DOUBLE_EQ(sizer.budget(1000.0, 2), 0.05);
  // Tasks take twice their estimate: batches carry half the estimated cost.
  sizer.observe(1.0, 2.0);
  sizer.observe(3.0, 6.0);
  EXPECT_DOUBLE_EQ(sizer.seconds_per_cost(), 2.0);
  EXPECT_DOUBLE_EQ(sizer.budget(1000.0, 2), 0.025);
  // Near the end a batch is at most what remains over two batches per worker.
  EXPECT_DOUBLE_EQ(sizer.budget(0.04, 2), 0.01);
  // Nonsense observations are ignored.
  sizer.observe(0.0, 5.0);
  sizer.observe(1.0, std::nan(""));
  EXPECT_DOUBLE_EQ(sizer.seconds_per_cost(), 2.0);
}

}  // namespace
}  // namespace qsweep::run
