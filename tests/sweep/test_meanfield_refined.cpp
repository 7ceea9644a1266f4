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
  message = error_of(head + "    order: 2\n    N: 10\n");
  EXPECT_EQ(message.rfind("test.yaml:5:12: ", 0), 0u) << message;
  EXPECT_NE(message.find("not implemented yet"), std::string::npos) << message;
  message = error_of(head + "    order: 1\n    horizon: 5\n    N: 10\n");
  EXPECT_NE(message.find("not implemented yet"), std::string::npos) << message;
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
