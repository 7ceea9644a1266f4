// The thresholds of crossing refinements (sweep::Rounds::crossings, sweep::threshold_table): what
// /thresholds stores, from the values of the finished points alone (docs/results-layout.md,
// "/thresholds"). Values come from the mean field's closed form, E[T] = sum_k lambda^(2^k - 2)
// for power_of_d with d = 2, so the rounds run in the test without executing tasks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <variant>

#include "qsweep/sweep/plan.hpp"
#include "qsweep/sweep/rounds.hpp"
#include "qsweep/sweep/thresholds.hpp"

namespace qsweep::sweep {
namespace {

double et(double lambda) {
  double sum = 0.0;
  for (int k = 1; k < 60; ++k) sum += std::pow(lambda, std::pow(2.0, k) - 2.0);
  return sum;
}

Plan threshold_plan(double crossing, int max_points = 100) {
  return parse_plan(R"(
name: thresholds
blocks:
  - method: meanfield
    policy: power_of_d
    policy_d: 2
    lambda: {linspace: [0.5, 0.99, 5]}
    refine: {axis: lambda, quantity: ET, crossing: )" +
                        std::to_string(crossing) +
                        ", tolerance: 1e-6, max_points: " + std::to_string(max_points) + "}\n",
                    "test.yaml");
}

// Runs the rounds to their end with values `value` (x -> y), every task finished.
void run_to_end(Plan& plan, Rounds& rounds, const std::function<double(double)>& value) {
  for (int round = 0; round < 100; ++round) {
    const auto points = rounds.propose([&](std::size_t, std::uint64_t, double x) {
      return std::optional<refine::Point>(refine::Point{x, value(x), 0.0});
    });
    ASSERT_TRUE(points.has_value());
    if (points->empty()) return;
    rounds.add(plan, *points);
  }
  FAIL() << "the rounds do not end";
}

std::vector<CurveCrossings> crossings_of(const Plan& plan, const Rounds& rounds,
                                         const std::function<double(double)>& value) {
  return rounds.crossings(
      [&](std::size_t, std::uint64_t, double x) {
        return std::optional<refine::Point>(refine::Point{x, value(x), 0.0});
      },
      [&plan](std::uint64_t id) { return plan.tasks.at(id).round; });
}

// The cell of column `name` in row `row` of the table.
const CellValue& cell(const ThresholdTable& table, std::size_t row, const std::string& name) {
  for (std::size_t c = 0; c < table.columns.size(); ++c)
    if (table.columns[c].name == name) return table.rows.at(row).cells.at(c);
  throw std::out_of_range("no column " + name);
}

TEST(Thresholds, ARowPerCrossingWithItsBracketTasksAndTheCurvesKeys) {
  Plan plan = threshold_plan(5.0);
  ASSERT_TRUE(has_crossings(plan));
  Rounds rounds(plan);
  run_to_end(plan, rounds, et);
  const std::vector<CurveCrossings> curves = crossings_of(plan, rounds, et);
  ASSERT_EQ(curves.size(), 1u);
  ASSERT_EQ(curves[0].thresholds.size(), 1u);
  const CurveThreshold& t = curves[0].thresholds[0];
  EXPECT_TRUE(t.bracket.converged);
  EXPECT_FALSE(t.stalled);
  EXPECT_EQ(plan.tasks.at(t.task_lo).as<MeanfieldTask>().options.lambda, t.bracket.lo);
  EXPECT_EQ(plan.tasks.at(t.task_hi).as<MeanfieldTask>().options.lambda, t.bracket.hi);
  EXPECT_EQ(curves[0].points, plan.tasks.size());
  EXPECT_EQ(curves[0].round, rounds.round());

  const ThresholdTable table = threshold_table(plan, curves);
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(std::get<std::string>(cell(table, 0, "state")), kThresholdConverged);
  EXPECT_EQ(std::get<std::int64_t>(cell(table, 0, "found")), 1);
  EXPECT_EQ(std::get<std::int64_t>(cell(table, 0, "converged")), 1);
  EXPECT_EQ(std::get<double>(cell(table, 0, "threshold")), t.bracket.value);
  EXPECT_LE(std::abs(et(t.bracket.value) - 5.0), 1e-4);
  // The curve's own keys, and not-applicable in the axis' column.
  EXPECT_EQ(std::get<std::string>(cell(table, 0, "policy")), "power_of_d");
  EXPECT_EQ(std::get<std::int64_t>(cell(table, 0, "policy_d")), 2);
  EXPECT_TRUE(std::isnan(std::get<double>(cell(table, 0, "lambda"))));
  EXPECT_EQ(std::get<std::string>(cell(table, 0, "axis")), "lambda");
  EXPECT_EQ(std::get<double>(cell(table, 0, "refine_tolerance")), 1e-6);
  // meanfield's own parameter `tolerance` (of the occupancy) keeps its name.
  EXPECT_EQ(std::get<double>(cell(table, 0, "tolerance")), 1e-15);
  EXPECT_TRUE(table.warnings[0].empty());
  std::set<std::string> names;
  for (const ColumnSpec& spec : table.columns) EXPECT_TRUE(names.insert(spec.name).second);
}

// Before a round's points are finished, a bracket they split is refining; budgets and values
// that never cross say so, in a row all the same.
TEST(Thresholds, RefiningBudgetAndNotFoundAreRowsToo) {
  Plan plan = threshold_plan(5.0, 7);
  Rounds rounds(plan);
  const auto first = rounds.propose([&](std::size_t, std::uint64_t, double x) {
    return std::optional<refine::Point>(refine::Point{x, et(x), 0.0});
  });
  ASSERT_TRUE(first && first->size() == 1);
  rounds.add(plan, *first);
  // The new point is pending: left out, and the bracket it splits is refining.
  const std::vector<CurveCrossings> pending = rounds.crossings(
      [&](std::size_t, std::uint64_t id, double x) -> std::optional<refine::Point> {
        if (plan.tasks.at(id).round > 0) return std::nullopt;
        return refine::Point{x, et(x), 0.0};
      },
      [&plan](std::uint64_t id) { return plan.tasks.at(id).round; });
  ASSERT_EQ(pending.at(0).thresholds.size(), 1u);
  EXPECT_TRUE(pending[0].thresholds[0].bracket.refining);
  EXPECT_EQ(pending[0].points, 5u);
  EXPECT_EQ(pending[0].round, 0);
  ThresholdTable table = threshold_table(plan, pending);
  EXPECT_EQ(std::get<std::string>(cell(table, 0, "state")), kThresholdRefining);
  EXPECT_TRUE(table.warnings[0].empty());

  run_to_end(plan, rounds, et);  // 7 points: the budget stops it
  table = threshold_table(plan, crossings_of(plan, rounds, et));
  EXPECT_EQ(std::get<std::string>(cell(table, 0, "state")), kThresholdBudget);
  EXPECT_EQ(std::get<std::int64_t>(cell(table, 0, "converged")), 0);
  EXPECT_EQ(std::get<std::int64_t>(cell(table, 0, "points")), 7);
  EXPECT_NE(table.warnings[0].find("not converged"), std::string::npos) << table.warnings[0];

  Plan never = threshold_plan(50.0);
  Rounds none(never);
  run_to_end(never, none, et);
  EXPECT_EQ(never.tasks.size(), 5u);
  table = threshold_table(never, crossings_of(never, none, et));
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(std::get<std::string>(cell(table, 0, "state")), kThresholdNotFound);
  EXPECT_EQ(std::get<std::int64_t>(cell(table, 0, "found")), 0);
  EXPECT_EQ(std::get<std::int64_t>(cell(table, 0, "crossing_index")), -1);
  EXPECT_TRUE(std::isnan(std::get<double>(cell(table, 0, "bracket_lo"))));
  EXPECT_EQ(std::get<std::int64_t>(cell(table, 0, "task_lo")), -1);
  const std::string note = std::get<std::string>(cell(table, 0, "note"));
  EXPECT_NE(note.find("ET stays below 50 on lambda in [0.5, 0.99]"), std::string::npos) << note;
  EXPECT_NE(table.warnings[0].find("no threshold"), std::string::npos);
}

// A point whose task gives no value (unstable, or NaN) is never proposed again: the rounds end,
// and the bracket it would split is stalled, not refining forever.
TEST(Thresholds, APointWithoutAValueStallsItsBracketInsteadOfLoopingForever) {
  Plan plan = threshold_plan(5.0);
  Rounds rounds(plan);
  std::set<double> initial;
  for (const Task& task : plan.tasks) initial.insert(task.as<MeanfieldTask>().options.lambda);
  double first = std::nan("");
  const auto value = [&](double x) {
    if (std::isnan(first) && !initial.contains(x)) first = x;  // the first point a round adds
    return x == first ? std::numeric_limits<double>::quiet_NaN() : et(x);
  };
  run_to_end(plan, rounds, value);
  EXPECT_EQ(rounds.round(), 1);
  EXPECT_EQ(plan.tasks.size(), 6u);
  const std::vector<CurveCrossings> curves = crossings_of(plan, rounds, value);
  ASSERT_EQ(curves.at(0).thresholds.size(), 1u);
  EXPECT_TRUE(curves[0].thresholds[0].stalled);
  EXPECT_FALSE(curves[0].thresholds[0].bracket.refining);
  const ThresholdTable table = threshold_table(plan, curves);
  EXPECT_EQ(std::get<std::string>(cell(table, 0, "state")), kThresholdStalled);
  EXPECT_NE(table.warnings[0].find("gave no value"), std::string::npos) << table.warnings[0];
}

}  // namespace
}  // namespace qsweep::sweep
