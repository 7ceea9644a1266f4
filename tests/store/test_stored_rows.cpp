// Finished rows read back as cells (store/stored_rows.hpp), as growing a file and `qsweep merge`
// copy them: every cell comes back as it was written (a distribution with its NaN padding), a
// copy at other task ids verifies, and the comparison of two runs' rows sees a changed result but
// not the per-run columns.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "mpi_test_environment.hpp"
#include "qsweep/run/plan_results.hpp"
#include "qsweep/store/stored_rows.hpp"
#include "qsweep/store/verify.hpp"
#include "qsweep/sweep/columns.hpp"
#include "store_test_util.hpp"

namespace qsweep::store {
namespace {

using testing::mixed_plan;
using testing::ResultsFileTest;

class StoredRowsTest : public ResultsFileTest {
 protected:
  // Every task of the mixed plan finished, by rank 3, with its outcome kept.
  void make_done_file() {
    run::create_results_file(path_, plan_, layout_, provenance(), MPI_COMM_WORLD);
    ResultsFile file(path_, layout_, MPI_COMM_WORLD);
    for (const sweep::Task& task : plan_.tasks) outcomes_.push_back(sweep::execute(task));
    std::vector<run::FinishedTask> finished;
    for (std::uint64_t id = 0; id < plan_.tasks.size(); ++id)
      finished.push_back({id, outcomes_[id], 3});
    std::vector<std::int32_t> attempts(plan_.tasks.size(), 2);
    std::vector<std::uint64_t> ids;
    for (std::uint64_t id = 0; id < plan_.tasks.size(); ++id) ids.push_back(id);
    file.write_attempts(ids, attempts);
    run::write_finished(file, plan_, finished);
    file.close();
  }

  sweep::Plan plan_ = mixed_plan();
  Layout layout_ = run::results_layout(plan_);
  std::vector<sweep::TaskOutcome> outcomes_;
};

TEST_F(StoredRowsTest, EveryCellComesBackAsWritten) {
  make_done_file();
  std::vector<std::uint64_t> ids;
  for (std::uint64_t id = 0; id < plan_.tasks.size(); id += 2) ids.push_back(id);
  ids.push_back(plan_.tasks.size() - 1);
  StoredRows stored(path_, layout_);
  const std::vector<StoredRow> rows = stored.read(ids);
  ASSERT_EQ(rows.size(), ids.size());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const std::uint64_t id = ids[k];
    const sweep::Task& task = plan_.tasks[id];
    EXPECT_EQ(rows[k].id, id);
    EXPECT_EQ(rows[k].attempts, 2);
    const Row task_row = sweep::make_task_row(task, outcomes_[id], 3);
    const Row group_row = sweep::make_row(task, outcomes_[id]);
    const auto& group = layout_.groups()[layout_.group_of(id)].columns;
    // Cell by cell: numbers by their bits, a distribution padded with NaN to the group's width.
    for (std::size_t c = 0; c < task_row.cells.size(); ++c) {
      if (const auto* x = std::get_if<double>(&task_row.cells[c])) {
        EXPECT_EQ(std::bit_cast<std::uint64_t>(*x),
                  std::bit_cast<std::uint64_t>(std::get<double>(rows[k].rows.task.cells[c])));
      } else {
        EXPECT_EQ(task_row.cells[c], rows[k].rows.task.cells[c]) << id << " " << c;
      }
    }
    for (std::size_t c = 0; c < group.size(); ++c) {
      const CellValue& written = group_row.cells[c];
      const CellValue& read = rows[k].rows.group.cells[c];
      if (group[c].spec.type == ColumnType::f64_vector) {
        const auto& w = std::get<std::vector<double>>(written);
        const auto& r = std::get<std::vector<double>>(read);
        ASSERT_EQ(r.size(), group[c].width) << group[c].spec.name;
        for (std::size_t i = 0; i < r.size(); ++i) {
          if (i < w.size() && !std::isnan(w[i])) {
            EXPECT_EQ(r[i], w[i]);
          } else {
            EXPECT_TRUE(std::isnan(r[i]));
          }
        }
      } else if (const auto* x = std::get_if<double>(&written)) {
        const double y = std::get<double>(read);
        EXPECT_TRUE(std::isnan(*x) ? std::isnan(y) : *x == y) << group[c].spec.name;
      } else if (const auto* xs = std::get_if<std::vector<double>>(&written)) {
        const auto& ys = std::get<std::vector<double>>(read);
        ASSERT_EQ(xs->size(), ys.size()) << group[c].spec.name;
        for (std::size_t i = 0; i < xs->size(); ++i)
          EXPECT_TRUE(std::isnan((*xs)[i]) ? std::isnan(ys[i]) : (*xs)[i] == ys[i]);
      } else {
        EXPECT_EQ(written, read) << id << " " << group[c].spec.name;
      }
    }
    EXPECT_EQ(differing_result(group, group_row, rows[k].rows.group), "");
  }
}

// Deterministic tasks only: random ones keep their ids (their streams are keyed by them).
const char* const kExactBlocks = R"(name: store-test
blocks:
  - method: exact
    family: ring
    N: [4, 5]
    lambda: [0.3, 0.6]
    qmax: 4
)";
const char* const kPathBlock = R"(  - method: exact
    family: path
    N: 3
    lambda: 0.5
    qmax: 9
)";
const char* const kWideBlock = R"(  - method: exact
    family: complete
    N: 3
    lambda: 0.5
    qmax: 12
)";

TEST_F(StoredRowsTest, RowsCopiedToOtherIdsVerify) {
  plan_ = sweep::parse_plan(std::string(kExactBlocks) + kPathBlock, "a.yaml");
  layout_ = run::results_layout(plan_);
  make_done_file();
  // The path block first, and a block with a wider pmf: every id changes, the pmf is padded.
  std::string moved = kExactBlocks;
  moved.insert(moved.find("  - method"), kPathBlock);
  const sweep::Plan plan = sweep::parse_plan(moved + kWideBlock, "b.yaml");
  const Layout layout = run::results_layout(plan);
  const std::string copy = (dir_ / "copy.h5").string();
  run::create_results_file(copy, plan, layout, provenance(), MPI_COMM_WORLD);
  ResultsFile file(copy, layout, MPI_COMM_WORLD);
  std::vector<std::uint64_t> ids(plan_.tasks.size());
  for (std::uint64_t id = 0; id < ids.size(); ++id) ids[id] = id;
  StoredRows stored(path_, layout_);
  std::vector<FinishedRow> rows;
  std::vector<std::uint64_t> to;
  std::vector<std::int32_t> attempts;
  for (const StoredRow& row : stored.read(ids)) {
    const std::string key = sweep::task_key(plan_.tasks[row.id]);
    std::uint64_t target = 0;
    while (target < plan.tasks.size() && sweep::task_key(plan.tasks[target]) != key) ++target;
    ASSERT_LT(target, plan.tasks.size());
    EXPECT_NE(target, row.id);
    const sweep::Task& task = plan.tasks[target];
    const auto& group = layout.groups()[layout.group_of(target)].columns;
    rows.push_back(
        {target,
         {with_parameters(layout.task_columns(), sweep::make_task_row(task), row.rows.task),
          with_parameters(group, sweep::make_row(task, {}), row.rows.group)}});
    to.push_back(target);
    attempts.push_back(row.attempts);
  }
  file.write_attempts(to, attempts);
  file.write_finished(rows);
  file.close();
  const Verification verified = run::verify_results(copy, plan, layout);
  EXPECT_TRUE(verified.damaged.empty());
  EXPECT_EQ(verified.finished, plan_.tasks.size());
  EXPECT_EQ(verified.statuses.back(), TaskStatus::pending);  // the new task
  for (std::size_t c = 0; c < layout.groups()[0].columns.size(); ++c) {
    if (layout.groups()[0].columns[c].spec.name != "pmf") continue;
    EXPECT_EQ(layout_.groups()[0].columns[c].width, 10U);  // qmax 9 + 1
    EXPECT_EQ(layout.groups()[0].columns[c].width, 13U);   // qmax 12 + 1
  }
}

TEST_F(StoredRowsTest, DifferingResultSeesResultsNotPerRunColumns) {
  const sweep::Task& task = plan_.tasks[0];
  sweep::TaskOutcome outcome = sweep::execute(task);
  const auto& tasks = layout_.task_columns();
  const auto& group = layout_.groups()[layout_.group_of(0)].columns;
  const Row a = sweep::make_task_row(task, outcome, 1);
  EXPECT_EQ(differing_result(tasks, a, sweep::make_task_row(task, outcome, 2)), "");  // rank
  sweep::TaskOutcome slower = outcome;
  slower.wall_seconds += 1.0;
  EXPECT_EQ(differing_result(tasks, a, sweep::make_task_row(task, slower, 1)), "");
  slower.warning = "something";
  EXPECT_EQ(differing_result(tasks, a, sweep::make_task_row(task, slower, 1)), "warning");
  Row b = sweep::make_row(task, outcome);
  Row changed = b;
  for (std::size_t c = 0; c < group.size(); ++c) {
    if (group[c].spec.name != "EQ") continue;
    changed.cells[c] = std::nextafter(std::get<double>(b.cells[c]), 1e300);
  }
  EXPECT_EQ(differing_result(group, b, changed), "EQ");
  // A distribution as wide as a wider group (NaN padding) is the same; a value there is not.
  for (std::size_t c = 0; c < group.size(); ++c) {
    if (group[c].spec.type != ColumnType::f64_vector) continue;
    Row wider = b;
    auto& values = std::get<std::vector<double>>(wider.cells[c]);
    values.push_back(std::nan(""));
    EXPECT_EQ(differing_result(group, b, wider), "");
    values.back() = 0.5;
    EXPECT_EQ(differing_result(group, b, wider), group[c].spec.name);
  }
}

}  // namespace
}  // namespace qsweep::store
