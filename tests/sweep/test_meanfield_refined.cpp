// The refined mean field in sweep files: `order` and `N` reach the task, its row holds the
// correction terms and the corrected values (NaN and empty for order 0), and the refinements that
// do not exist are refused at the key at fault.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <variant>
#include <vector>

#include "qsweep/common/error.hpp"
#include "qsweep/sweep/columns.hpp"
#include "qsweep/sweep/execute.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::sweep {
namespace {

std::string error_of(const std::string& yaml) {
  try {
    parse_plan(yaml, "test.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// The cell of column `name` in the row of a meanfield task.
CellValue cell(const Task& task, const TaskOutcome& outcome, const std::string& name) {
  const auto& columns = group_columns(Method::meanfield);
  const Row row = make_row(task, outcome);
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i].name == name) return row.cells[i];
  ADD_FAILURE() << "no column " << name;
  return CellValue{};
}

TEST(MeanfieldRefined, OrderAndNReachTheTaskAndTheRow) {
  const Plan plan = parse_plan(R"(name: refined
blocks:
  - method: meanfield
    policy_d: 2
    lambda: 0.9
    order: [0, 1]
    N: [10, 100]
)",
                               "test.yaml");
  // order 0 leaves N out: 1 + 2 tasks.
  ASSERT_EQ(plan.tasks.size(), 3u);
  const Task& limit = plan.tasks[0];
  EXPECT_EQ(limit.as<MeanfieldTask>().options.order, 0);
  EXPECT_EQ(limit.as<MeanfieldTask>().options.N, 0);
  const TaskOutcome limit_outcome = execute(limit);
  EXPECT_TRUE(std::isnan(std::get<double>(cell(limit, limit_outcome, "EQ_per_server_V"))));
  EXPECT_TRUE(std::isnan(std::get<double>(cell(limit, limit_outcome, "EQ_per_server_N"))));
  EXPECT_TRUE(std::get<std::vector<double>>(cell(limit, limit_outcome, "V")).empty());
  EXPECT_EQ(std::get<std::int64_t>(cell(limit, limit_outcome, "N")), -1);

  for (std::size_t t = 1; t < 3; ++t) {
    const Task& task = plan.tasks[t];
    const auto& o = task.as<MeanfieldTask>().options;
    EXPECT_EQ(o.order, 1);
    EXPECT_EQ(o.N, t == 1 ? 10 : 100);
    const TaskOutcome outcome = execute(task);
    const double EQ = std::get<double>(cell(task, outcome, "EQ_per_server"));
    const double EQ_V = std::get<double>(cell(task, outcome, "EQ_per_server_V"));
    const auto V = std::get<std::vector<double>>(cell(task, outcome, "V"));
    const auto x = std::get<std::vector<double>>(cell(task, outcome, "occupancy"));
    const auto xN = std::get<std::vector<double>>(cell(task, outcome, "occupancy_N"));
    ASSERT_EQ(V.size(), x.size());
    ASSERT_EQ(xN.size(), x.size());
    for (std::size_t k = 0; k < x.size(); ++k)
      EXPECT_DOUBLE_EQ(xN[k], x[k] + V[k] / static_cast<double>(o.N));
    EXPECT_GT(EQ_V, 0.0);  // finite systems queue more than the limit
    const auto N = static_cast<double>(o.N);
    EXPECT_DOUBLE_EQ(std::get<double>(cell(task, outcome, "EQ_per_server_N")), EQ + EQ_V / N);
    EXPECT_DOUBLE_EQ(std::get<double>(cell(task, outcome, "ET_N")), (EQ + EQ_V / N) / 0.9);
    EXPECT_EQ(std::get<std::int64_t>(cell(task, outcome, "order")), 1);
  }
}

// Order 2 adds V2 and EQ_V2 and puts its term in the corrected values; order 1 with a horizon
// fills the trajectory columns; the others are empty (NaN) where they do not apply.
TEST(MeanfieldRefined, OrderTwoAndTheTrajectoryReachTheRow) {
  const Plan plan = parse_plan(R"(name: refined
blocks:
  - method: meanfield
    lambda: 0.9
    order: 2
    N: 20
  - method: meanfield
    lambda: 0.9
    order: 1
    N: 20
    horizon: 4
    time_points: 3
    initial_counts: [0, 0, 1]
)",
                               "test.yaml");
  ASSERT_EQ(plan.tasks.size(), 2u);
  const Task& second = plan.tasks[0];
  const TaskOutcome outcome = execute(second);
  const double EQ = std::get<double>(cell(second, outcome, "EQ_per_server"));
  const double EQ_V = std::get<double>(cell(second, outcome, "EQ_per_server_V"));
  const double EQ_V2 = std::get<double>(cell(second, outcome, "EQ_per_server_V2"));
  const auto V = std::get<std::vector<double>>(cell(second, outcome, "V"));
  const auto V2 = std::get<std::vector<double>>(cell(second, outcome, "V2"));
  const auto x = std::get<std::vector<double>>(cell(second, outcome, "occupancy"));
  const auto xN = std::get<std::vector<double>>(cell(second, outcome, "occupancy_N"));
  ASSERT_EQ(V2.size(), x.size());
  for (std::size_t k = 0; k < x.size(); ++k)
    EXPECT_DOUBLE_EQ(xN[k], x[k] + V[k] / 20.0 + V2[k] / 400.0);
  EXPECT_DOUBLE_EQ(std::get<double>(cell(second, outcome, "EQ_per_server_N")),
                   EQ + EQ_V / 20.0 + EQ_V2 / 400.0);
  EXPECT_NEAR(EQ_V2, 5.268325, 1e-6);  // docs/meanfield.md's table
  EXPECT_TRUE(std::get<std::vector<double>>(cell(second, outcome, "trajectory_V")).empty());
  EXPECT_TRUE(
      std::get<std::vector<double>>(cell(second, outcome, "trajectory_EQ_per_server_V")).empty());

  const Task& path = plan.tasks[1];
  const TaskOutcome path_outcome = execute(path);
  EXPECT_TRUE(std::isnan(std::get<double>(cell(path, path_outcome, "EQ_per_server_V2"))));
  EXPECT_TRUE(std::get<std::vector<double>>(cell(path, path_outcome, "V2")).empty());
  const auto trajectory = std::get<std::vector<double>>(cell(path, path_outcome, "trajectory"));
  const auto VT = std::get<std::vector<double>>(cell(path, path_outcome, "trajectory_V"));
  const auto xT = std::get<std::vector<double>>(cell(path, path_outcome, "trajectory_N"));
  const auto sums =
      std::get<std::vector<double>>(cell(path, path_outcome, "trajectory_EQ_per_server_V"));
  ASSERT_EQ(VT.size(), trajectory.size());
  ASSERT_EQ(xT.size(), trajectory.size());
  ASSERT_EQ(sums.size(), 3u);
  for (std::size_t i = 0; i < trajectory.size(); ++i)
    EXPECT_DOUBLE_EQ(xT[i], trajectory[i] + VT[i] / 20.0);
  EXPECT_EQ(sums[0], 0.0);  // a deterministic start: V(0) = 0
  EXPECT_GT(sums[2], 0.0);

  // The limit's rows leave every refined column empty or NaN.
  const Plan limit = parse_plan(
      "name: x\nblocks:\n  - method: meanfield\n    lambda: 0.9\n"
      "    horizon: 2\n",
      "test.yaml");
  const TaskOutcome limit_outcome = execute(limit.tasks[0]);
  for (const char* name : {"V2", "trajectory_V", "trajectory_N", "trajectory_EQ_per_server_V"})
    EXPECT_TRUE(std::get<std::vector<double>>(cell(limit.tasks[0], limit_outcome, name)).empty())
        << name;
  EXPECT_TRUE(
      std::isnan(std::get<double>(cell(limit.tasks[0], limit_outcome, "EQ_per_server_V2"))));
}

TEST(MeanfieldRefined, RefusalsNameTheKey) {
  const std::string head = "name: x\nblocks:\n  - method: meanfield\n    lambda: 0.9\n";
  // jsq: the drift is not smooth; the message is located at the value of `order` (line 6).
  std::string message = error_of(head + "    policy: jsq\n    order: 1\n    N: 10\n");
  EXPECT_EQ(message.rfind("test.yaml:6:12: ", 0), 0u) << message;
  EXPECT_NE(message.find("not smooth"), std::string::npos) << message;
  message = error_of(head + "    policy: jiq\n    order: 1\n    N: 10\n");
  EXPECT_NE(message.find("not smooth"), std::string::npos) << message;
  message = error_of(head + "    policy: redundancy_coc\n    order: 1\n    N: 10\n");
  EXPECT_EQ(message.rfind("test.yaml:6:12: ", 0), 0u) << message;
  message = error_of(head + "    policy: jsq\n    order: 2\n    N: 10\n");
  EXPECT_NE(message.find("not smooth"), std::string::npos) << message;
  // Order 2 is for the steady state: with a trajectory it is refused at `order`.
  message = error_of(head + "    order: 2\n    horizon: 5\n    N: 10\n");
  EXPECT_EQ(message.rfind("test.yaml:5:12: ", 0), 0u) << message;
  EXPECT_NE(message.find("trajectory of order 2"), std::string::npos) << message;
  message = error_of(head + "    order: 3\n    N: 10\n");
  EXPECT_EQ(message.rfind("test.yaml:5:12: ", 0), 0u) << message;
  // N below the servers sampled: located at N.
  message = error_of(head + "    policy_d: 3\n    order: 1\n    N: 2\n");
  EXPECT_EQ(message.rfind("test.yaml:7:8: meanfield: N = 2 servers cannot give 3 distinct", 0), 0u)
      << message;
  message = error_of(head + "    order: 1\n");
  EXPECT_NE(message.find("key 'N' is missing (required for order >= 1)"), std::string::npos)
      << message;
  message = error_of(head + "    N: 10\n");
  EXPECT_NE(message.find("applies to no task"), std::string::npos) << message;
}

}  // namespace
}  // namespace qsweep::sweep
