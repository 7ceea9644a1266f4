// The example sweeps in sweeps/ are valid, and the default one is small and covers several
// families with the exact method.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <variant>

#include "qsweep/sweep/columns.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::sweep {
namespace {

namespace fs = std::filesystem;

// A cell's value as bits (doubles by their bit patterns), so that NaN cells compare equal.
std::string cell_bits(const CellValue& cell) {
  return std::visit(
      [&cell](const auto& value) {
        using T = std::decay_t<decltype(value)>;
        std::string bits = std::to_string(cell.index()) + ":";
        const auto add = [&bits](const auto& x) {
          bits.append(reinterpret_cast<const char*>(&x), sizeof x);
        };
        if constexpr (std::is_same_v<T, std::string>) {
          bits += value;
        } else if constexpr (std::is_same_v<T, std::vector<double>> ||
                             std::is_same_v<T, std::vector<std::int64_t>>) {
          for (const auto& x : value) add(x);
        } else if constexpr (std::is_same_v<T, Repeated>) {
          add(value.value);
          add(value.count);
        } else {
          add(value);
        }
        return bits;
      },
      cell);
}

TEST(Examples, AllSweepsValidate) {
  std::size_t count = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(QSWEEP_SOURCE_DIR) / "sweeps")) {
    if (entry.path().extension() != ".yaml") continue;
    ++count;
    EXPECT_NO_THROW(load_plan(entry.path().string())) << entry.path();
  }
  EXPECT_GE(count, 1u);
}

// The results file is created from each task's parameter cells and one row of pending results per
// table (store::PlannedRows): that is right only if a task that has not run has the same cells
// outside its parameters as every other task, and make_parameter_row's parameters are
// make_row's. Checked on every task of every example sweep (every method, family and policy
// they use; ragged cells of a pending row are empty whatever their planned length).
TEST(Examples, PlannedRowsDifferOnlyInParameters) {
  std::set<Method> methods;
  for (const auto& entry : fs::directory_iterator(fs::path(QSWEEP_SOURCE_DIR) / "sweeps")) {
    if (entry.path().extension() != ".yaml") continue;
    const Plan plan = load_plan(entry.path().string());
    std::map<Method, Row> first_of;
    std::optional<Row> first_task_row;
    for (const Task& task : plan.tasks) {
      methods.insert(task.method());
      const Row row = make_row(task, {});
      const Row parameters = make_parameter_row(task);
      const Row& first = first_of.try_emplace(task.method(), row).first->second;
      const std::vector<ColumnSpec>& columns = group_columns(task.method());
      ASSERT_EQ(parameters.cells.size(), columns.size());
      for (std::size_t c = 0; c < columns.size(); ++c) {
        const CellValue& expected = columns[c].parameter ? row.cells[c] : first.cells[c];
        const CellValue& got = columns[c].parameter ? parameters.cells[c] : row.cells[c];
        // Bitwise: a NaN is the same NaN.
        EXPECT_EQ(cell_bits(got), cell_bits(expected))
            << entry.path().filename() << " task " << task.id << " column " << columns[c].name;
      }
      const Row task_row = make_task_row(task);
      const Row task_parameters = make_task_parameter_row(task, plan.tasks.key(task.id));
      if (!first_task_row) first_task_row = task_row;
      for (std::size_t c = 0; c < task_columns().size(); ++c) {
        const bool parameter = task_columns()[c].parameter;
        EXPECT_EQ(cell_bits(parameter ? task_parameters.cells[c] : task_row.cells[c]),
                  cell_bits(parameter ? task_row.cells[c] : first_task_row->cells[c]))
            << entry.path().filename() << " task " << task.id << " /tasks/"
            << task_columns()[c].name;
      }
    }
  }
  EXPECT_EQ(methods.size(), kMethodCount) << "the example sweeps use every method";
}

TEST(Examples, DefaultSweepIsSmallAndCoversSeveralFamilies) {
  const Plan plan = load_plan(std::string(QSWEEP_SOURCE_DIR) + "/sweeps/default.yaml");
  std::set<model::FamilyKind> families;
  double cost = 0.0;
  for (const Task& t : plan.tasks) {
    EXPECT_EQ(t.method(), Method::exact);
    families.insert(t.system().family.kind);
    cost += t.cost;
  }
  EXPECT_GE(families.size(), 4u);
  EXPECT_LT(cost, 10.0);
  EXPECT_TRUE(plan.unstable_tasks.empty());
}

// docs/sweep-format.md documents every key and every result column (as `name`).
TEST(Docs, EveryKeyAndColumnIsDocumented) {
  std::ifstream in(std::string(QSWEEP_SOURCE_DIR) + "/docs/sweep-format.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  ASSERT_FALSE(doc.empty());
  for (const auto& key : block_keys())
    EXPECT_NE(doc.find("`" + key.name + "`"), std::string::npos) << "key " << key.name;
  for (Method m : kMethods)
    for (const auto& column : group_columns(m))
      EXPECT_NE(doc.find("`" + column.name + "`"), std::string::npos)
          << group_name(m) << " column " << column.name;
  for (const char* top : {"name", "seed", "output", "on_unstable", "max_tasks", "blocks", "zip",
                          "method", "linspace", "logspace", "base", "heavy_traffic"})
    EXPECT_TRUE(doc.find(std::string("`") + top) != std::string::npos ||
                doc.find(std::string("{") + top + ":") != std::string::npos)
        << top;
}

}  // namespace
}  // namespace qsweep::sweep
