// The results file: layout from the plan, collective creation, independent row writes, reading
// back. Expected values come from the plan's own parameters and from the outcomes written, read
// back through the raw HDF5 API (not through the store's reader) where the layout is checked.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "../../src/store/row_image.hpp"
#include "mpi_test_environment.hpp"
#include "qsweep/run/plan_results.hpp"
#include "qsweep/store/layout.hpp"
#include "qsweep/store/results_file.hpp"
#include "qsweep/store/results_reader.hpp"
#include "qsweep/sweep/columns.hpp"
#include "qsweep/sweep/execute.hpp"
#include "qsweep/sweep/plan.hpp"
#include "store_test_util.hpp"

namespace qsweep::store {
namespace {

using run::FinishedTask;
using run::verify_results;
using sweep::kErrorWidth;
using testing::kMixedSweep;
using testing::mixed_plan;
using testing::ResultsFileTest;
namespace fs = std::filesystem;

// --- raw HDF5 reads (independent of ResultsReader) ----------------------------------------------

struct RawFile {
  explicit RawFile(const std::string& path)
      : id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)) {}
  ~RawFile() {
    if (id >= 0) H5Fclose(id);
  }
  hid_t id;
};

std::vector<hsize_t> raw_dims(hid_t file, const std::string& path) {
  const hid_t dataset = H5Dopen2(file, path.c_str(), H5P_DEFAULT);
  EXPECT_GE(dataset, 0) << path;
  const hid_t space = H5Dget_space(dataset);
  std::vector<hsize_t> dims(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space)));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  H5Sclose(space);
  H5Dclose(dataset);
  return dims;
}

template <class T>
std::vector<T> raw_read(hid_t file, const std::string& path, hid_t memory_type) {
  std::size_t n = 1;
  for (const hsize_t d : raw_dims(file, path)) n *= d;
  std::vector<T> values(n);
  const hid_t dataset = H5Dopen2(file, path.c_str(), H5P_DEFAULT);
  EXPECT_GE(H5Dread(dataset, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0) << path;
  H5Dclose(dataset);
  return values;
}

std::vector<double> raw_doubles(hid_t file, const std::string& path) {
  return raw_read<double>(file, path, H5T_NATIVE_DOUBLE);
}
std::vector<std::int64_t> raw_ints(hid_t file, const std::string& path) {
  return raw_read<std::int64_t>(file, path, H5T_NATIVE_INT64);
}

// Statuses through the enum type itself (as h5py does).
std::vector<std::int8_t> raw_statuses(hid_t file) {
  const hid_t dataset = H5Dopen2(file, "/tasks/status", H5P_DEFAULT);
  const hid_t type = H5Dget_type(dataset);
  EXPECT_EQ(H5Tget_class(type), H5T_ENUM);
  std::vector<std::int8_t> values(raw_dims(file, "/tasks/status")[0]);
  H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
  H5Tclose(type);
  H5Dclose(dataset);
  return values;
}

std::vector<std::string> raw_text(hid_t file, const std::string& path) {
  const hid_t dataset = H5Dopen2(file, path.c_str(), H5P_DEFAULT);
  const hid_t type = H5Dget_type(dataset);
  const std::size_t width = H5Tget_size(type);
  const std::size_t n = raw_dims(file, path)[0];
  std::vector<char> buffer(n * width);
  H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data());
  H5Tclose(type);
  H5Dclose(dataset);
  std::vector<std::string> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    const char* begin = buffer.data() + i * width;
    values[i].assign(begin, std::find(begin, begin + width, '\0'));
  }
  return values;
}

bool same_double(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// --- tests
// ----------------------------------------------------------------------------------------

TEST(Layout, RowsWidthsAndOffsetsFollowThePlan) {
  const sweep::Plan plan = mixed_plan();
  const Layout layout = run::results_layout(plan);
  ASSERT_EQ(layout.groups().size(), 3u);
  EXPECT_EQ(layout.groups()[0].name, "exact");
  EXPECT_EQ(layout.groups()[1].name, "simulate");
  EXPECT_EQ(layout.groups()[2].name, "ldp");

  // Rows are task order within each method.
  std::array<std::uint64_t, 3> rows{};
  for (const sweep::Task& task : plan.tasks) {
    EXPECT_EQ(layout.row_of(task.id), rows[static_cast<std::size_t>(task.method())]++);
  }
  EXPECT_EQ(rows[0], 5u);  // 2 N x 2 lambda + 1 path
  EXPECT_EQ(rows[1], 1u);
  EXPECT_EQ(rows[2], 2u);

  const GroupLayout& exact = layout.groups()[0];
  for (const ColumnLayout& column : exact.columns) {
    if (column.spec.name == "pmf") {
      EXPECT_EQ(column.width, 10u);  // max qmax + 1 = 9 + 1
    }
    if (column.spec.type == ColumnType::str) {
      EXPECT_EQ(column.width, kMaxStringLength);
    }
    if (column.spec.name == "ER_server") {
      // One value per server of each exact task, in row order: N = 4, 4, 5, 5, 3.
      EXPECT_EQ(column.offsets.values(), (std::vector<std::uint64_t>{0, 4, 8, 13, 18, 21}));
    }
  }
}

TEST(FitText, CutsAtCharacterBoundariesWithEllipsis) {
  EXPECT_EQ(fit_text("short", 8), "short");
  EXPECT_EQ(fit_text("exactly8", 8), "exactly8");
  EXPECT_EQ(fit_text("123456789", 8), "12345...");
  // "aé" is 3 bytes; é must not be split: "aé" + "..." does not fit 5, "a..." does.
  EXPECT_EQ(fit_text("a\xc3\xa9xyz", 5), "a...");
  EXPECT_EQ(fit_text("a\xc3\xa9xyzw", 6), "a\xc3\xa9...");
}

TEST_F(ResultsFileTest, CreateSizesEverythingAndStartsPending) {
  const sweep::Plan plan = mixed_plan();
  const Layout layout = run::results_layout(plan);
  run::create_results_file(path_, plan, layout, provenance(), MPI_COMM_WORLD);
  EXPECT_TRUE(fs::exists(path_));
  EXPECT_FALSE(fs::exists(path_ + ".partial"));

  const std::size_t n = plan.tasks.size();
  {
    const RawFile file(path_);
    ASSERT_GE(file.id, 0);
    EXPECT_EQ(raw_dims(file.id, "/tasks/status"), std::vector<hsize_t>{n});
    for (const std::int8_t status : raw_statuses(file.id)) EXPECT_EQ(status, 0);
    for (const std::int64_t attempts : raw_ints(file.id, "/tasks/attempts")) EXPECT_EQ(attempts, 0);
    for (const std::int64_t rank : raw_ints(file.id, "/tasks/rank")) EXPECT_EQ(rank, -1);
    for (const double wall : raw_doubles(file.id, "/tasks/wall_seconds"))
      EXPECT_TRUE(std::isnan(wall));
    const std::vector<std::int64_t> ids = raw_ints(file.id, "/tasks/id");
    const std::vector<std::string> methods = raw_text(file.id, "/tasks/method");
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_EQ(ids[i], static_cast<std::int64_t>(i));
      EXPECT_EQ(methods[i], std::string(qsweep::name_of(plan.tasks[i].method())));
    }

    // Parameters are in place before any task runs; results are NaN.
    const std::vector<std::int64_t> task_id = raw_ints(file.id, "/exact/task_id");
    const std::vector<std::int64_t> N = raw_ints(file.id, "/exact/N");
    const std::vector<double> lambda = raw_doubles(file.id, "/exact/lambda");
    const std::vector<double> EQ = raw_doubles(file.id, "/exact/EQ");
    ASSERT_EQ(task_id.size(), 5u);
    for (std::size_t row = 0; row < task_id.size(); ++row) {
      const sweep::Task& task = plan.tasks.at(static_cast<std::size_t>(task_id[row]));
      EXPECT_EQ(task.method(), sweep::Method::exact);
      EXPECT_EQ(N[row], task.system().family.N);
      EXPECT_EQ(lambda[row], task.system().lambda);
      EXPECT_TRUE(std::isnan(EQ[row]));
    }
    EXPECT_EQ(raw_dims(file.id, "/exact/pmf"), (std::vector<hsize_t>{5, 10}));
    EXPECT_EQ(raw_dims(file.id, "/simulate/occupancy"), (std::vector<hsize_t>{1, 0}));
    EXPECT_EQ(raw_dims(file.id, "/exact/ER_server"), std::vector<hsize_t>{21});
    EXPECT_EQ(raw_ints(file.id, "/exact/ER_server_offset"),
              (std::vector<std::int64_t>{0, 4, 8, 13, 18}));
    for (const std::int64_t count : raw_ints(file.id, "/exact/ER_server_count"))
      EXPECT_EQ(count, 0);
  }  // closed: the reader opens the file with other locking flags

  // Provenance and identity attributes, through the reader.
  const ResultsReader reader(path_);
  EXPECT_EQ(reader.attribute("format"), kFormatName);
  EXPECT_EQ(reader.attribute("plan_hash"), plan.hash);
  EXPECT_EQ(reader.attribute("sweep_yaml"), kMixedSweep);
  EXPECT_EQ(reader.attribute("sweep_name"), "store-test");
  EXPECT_EQ(reader.attribute("command_line"), "qsweep run test.yaml");
  EXPECT_EQ(reader.attribute("mpi_ranks"), "1");
  EXPECT_EQ(reader.task_count(), n);
}

TEST_F(ResultsFileTest, FinishedRowsLandInTheirRowsStatusLast) {
  const sweep::Plan plan = mixed_plan();
  const Layout layout = run::results_layout(plan);
  run::create_results_file(path_, plan, layout, provenance(), MPI_COMM_WORLD);

  // Run some tasks of every method for real (the simulate task is 7); write them in one call,
  // out of order.
  const auto runs = [](std::uint64_t id) { return id % 2 == 0 || id == 7; };
  std::vector<FinishedTask> finished;
  for (std::uint64_t id = plan.tasks.size(); id-- > 0;) {
    if (runs(id)) finished.push_back({id, sweep::execute(plan.tasks[id]), 3});
  }
  const std::vector<FinishedTask> written = finished;
  {
    ResultsFile file(path_, layout, MPI_COMM_WORLD);
    std::vector<std::uint64_t> ids;
    std::vector<std::int32_t> attempts;
    for (const FinishedTask& task : finished) {
      ids.push_back(task.id);
      attempts.push_back(static_cast<std::int32_t>(task.id) + 1);
    }
    file.write_attempts(ids, attempts);
    run::write_finished(file, plan, finished);
    file.close();
  }

  const RawFile raw(path_);
  const std::vector<std::int8_t> statuses = raw_statuses(raw.id);
  const std::vector<std::int64_t> attempts = raw_ints(raw.id, "/tasks/attempts");
  const std::vector<std::int64_t> ranks = raw_ints(raw.id, "/tasks/rank");
  for (std::uint64_t id = 0; id < plan.tasks.size(); ++id) {
    const bool ran = runs(id);
    EXPECT_EQ(statuses[id], ran ? 1 : 0) << id;  // these small stable tasks are done
    EXPECT_EQ(attempts[id], ran ? static_cast<std::int64_t>(id) + 1 : 0);
    EXPECT_EQ(ranks[id], ran ? 3 : -1);
  }

  const std::vector<std::int64_t> task_id = raw_ints(raw.id, "/exact/task_id");
  const std::vector<double> EQ = raw_doubles(raw.id, "/exact/EQ");
  const std::vector<double> pmf = raw_doubles(raw.id, "/exact/pmf");  // [5, 10]
  const std::vector<double> er = raw_doubles(raw.id, "/exact/ER_server");
  const std::vector<std::int64_t> er_offset = raw_ints(raw.id, "/exact/ER_server_offset");
  const std::vector<std::int64_t> er_count = raw_ints(raw.id, "/exact/ER_server_count");
  for (std::size_t row = 0; row < task_id.size(); ++row) {
    const auto id = static_cast<std::uint64_t>(task_id[row]);
    const FinishedTask* task = nullptr;
    for (const FinishedTask& w : written) {
      if (w.id == id) task = &w;
    }
    if (task == nullptr) {
      EXPECT_TRUE(std::isnan(EQ[row]));
      EXPECT_EQ(er_count[row], 0);
      continue;
    }
    const auto& result = std::get<exact::Result>(task->outcome.result);
    EXPECT_EQ(EQ[row], result.EQ);
    for (std::size_t q = 0; q < 10; ++q) {
      const double expected = q < result.pmf.size() ? result.pmf[q] : std::nan("");
      EXPECT_TRUE(same_double(pmf[row * 10 + q], expected)) << row << " " << q;
    }
    ASSERT_EQ(er_count[row], static_cast<std::int64_t>(result.ER_server.size()));
    for (std::size_t n = 0; n < result.ER_server.size(); ++n) {
      EXPECT_EQ(er[static_cast<std::size_t>(er_offset[row]) + n], result.ER_server[n]);
    }
  }

  EXPECT_EQ(raw_doubles(raw.id, "/simulate/EQ")[0],
            std::get<sim::Result>(written[0].outcome.result).EQ);  // task 7 was first

  const std::vector<double> probability = raw_doubles(raw.id, "/ldp/probability");
  const std::vector<std::int64_t> ldp_task = raw_ints(raw.id, "/ldp/task_id");
  for (std::size_t row = 0; row < ldp_task.size(); ++row) {
    const auto id = static_cast<std::uint64_t>(ldp_task[row]);
    if (!runs(id)) {
      EXPECT_TRUE(std::isnan(probability[row]));
      continue;
    }
    for (const FinishedTask& w : written) {
      if (w.id == id) {
        EXPECT_EQ(probability[row], std::get<ldp::Result>(w.outcome.result).probability);
      }
    }
  }
}

// Pooled simulations (one value for all servers, a Repeated cell in the row): rows that reserve
// more than kLargeRowValues values are written alone, at creation (NaN padding) and when
// finished (the value N times), in one call with a small row; every server's value lands and
// every row verifies (its checksum recomputed from the file).
TEST_F(ResultsFileTest, LargeRowsAreWrittenAloneWithTheirValuesAndPadding) {
  const sweep::Plan plan = sweep::parse_plan(R"(name: large
seed: 3
blocks:
  - {method: simulate, family: complete, d: 2, N: [6, 20000, 30000, 25000], lambda: 0.5,
     policy: jsq, horizon: 1, warmup: 0, replications: 2}
)",
                                             "large.yaml");
  const Layout layout = run::results_layout(plan);
  ASSERT_GT(detail::reserved_values(layout.groups()[0].columns, 1), detail::kLargeRowValues);
  ASSERT_LE(detail::reserved_values(layout.groups()[0].columns, 0), detail::kLargeRowValues);
  run::create_results_file(path_, plan, layout, provenance(), MPI_COMM_WORLD);
  std::vector<FinishedTask> finished;
  for (std::uint64_t id = 0; id < 3; ++id)
    finished.push_back({id, sweep::execute(plan.tasks[id]), 0});
  const std::vector<FinishedTask> written = finished;
  {
    ResultsFile file(path_, layout, MPI_COMM_WORLD);
    run::write_finished(file, plan, finished);
    file.close();
  }
  const Verification verification = verify_results(path_, plan, layout);
  EXPECT_EQ(verification.finished, 3u);
  EXPECT_TRUE(verification.damaged.empty());

  const RawFile raw(path_);
  const std::vector<double> er = raw_doubles(raw.id, "/simulate/utilisation");
  const std::vector<std::int64_t> offset = raw_ints(raw.id, "/simulate/utilisation_offset");
  const std::vector<std::int64_t> count = raw_ints(raw.id, "/simulate/utilisation_count");
  for (std::size_t row = 0; row < 4; ++row) {
    const std::size_t N = static_cast<std::size_t>(plan.tasks[row].system().family.N);
    const auto begin = static_cast<std::size_t>(offset[row]);
    if (row == 3) {  // pending: padding only
      EXPECT_EQ(count[row], 0);
      for (std::size_t n = 0; n < N; ++n) ASSERT_TRUE(std::isnan(er[begin + n])) << n;
      continue;
    }
    const sim::Result& result = std::get<sim::Result>(written[row].outcome.result);
    ASSERT_TRUE(result.utilisation.one_value());
    EXPECT_EQ(count[row], static_cast<std::int64_t>(N));
    for (std::size_t n = 0; n < N; ++n) ASSERT_EQ(er[begin + n], result.utilisation[n]) << n;
  }
}

TEST_F(ResultsFileTest, ResultsThatDoNotFitTheirRowsBecomeFailures) {
  const sweep::Plan plan = mixed_plan();
  const Layout layout = run::results_layout(plan);
  run::create_results_file(path_, plan, layout, provenance(), MPI_COMM_WORLD);
  const std::uint64_t first = layout.groups()[0].task_ids[0];   // ring N = 4
  const std::uint64_t second = layout.groups()[0].task_ids[1];  // ring N = 4

  sweep::TaskOutcome too_long = sweep::execute(plan.tasks[first]);
  std::get<exact::Result>(too_long.result).ER_server.assign(5, 1.0);  // 4 servers reserved
  std::vector<FinishedTask> finished{{first, too_long, 0},
                                     {second, sweep::execute(plan.tasks[second]), 0}};
  {
    ResultsFile file(path_, layout, MPI_COMM_WORLD);
    run::write_finished(file, plan, finished);
    file.close();
  }
  EXPECT_EQ(finished[0].outcome.status, TaskStatus::failed);
  EXPECT_NE(finished[0].outcome.error.find("ER_server"), std::string::npos);

  {
    const ResultsReader reader(path_);
    const std::vector<TaskStatus> statuses = reader.statuses();
    EXPECT_EQ(statuses[first], TaskStatus::failed);
    EXPECT_EQ(statuses[second], TaskStatus::done);
    const std::vector<TaskProblem> problems = reader.problems(TaskStatus::failed, 10);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].id, first);
    EXPECT_EQ(problems[0].method, "exact");
    EXPECT_NE(problems[0].error.find("ER_server has 5 values"), std::string::npos);
  }  // closed: the raw read below opens the file with other locking flags

  // The neighbour's ragged values are intact (the failed row wrote nothing past its own).
  const RawFile raw(path_);
  const std::vector<double> er = raw_doubles(raw.id, "/exact/ER_server");
  const auto& result = std::get<exact::Result>(finished[1].outcome.result);
  for (std::size_t n = 0; n < 4; ++n) EXPECT_EQ(er[4 + n], result.ER_server[n]);
  for (std::size_t n = 0; n < 4; ++n) EXPECT_TRUE(std::isnan(er[n]));
}

TEST_F(ResultsFileTest, LongErrorMessagesAreCutToTheColumn) {
  const sweep::Plan plan = mixed_plan();
  const Layout layout = run::results_layout(plan);
  run::create_results_file(path_, plan, layout, provenance(), MPI_COMM_WORLD);
  std::vector<FinishedTask> finished{
      {1, sweep::TaskOutcome{TaskStatus::failed, std::string(1000, 'x'), {}, 0.5, {}}, 0}};
  {
    ResultsFile file(path_, layout, MPI_COMM_WORLD);
    run::write_finished(file, plan, finished);
    file.close();
  }
  const ResultsReader reader(path_);
  const std::vector<TaskProblem> problems = reader.problems(TaskStatus::failed, 10);
  ASSERT_EQ(problems.size(), 1u);
  // At most kErrorWidth - 1 bytes of text: the field is NUL terminated.
  EXPECT_EQ(problems[0].error, std::string(kErrorWidth - 1 - 3, 'x') + "...");
}

TEST_F(ResultsFileTest, CreateReplacesAnExistingFileOnlyWhenComplete) {
  const sweep::Plan plan = mixed_plan();
  const Layout layout = run::results_layout(plan);
  { std::ofstream(path_) << "an old file"; }
  run::create_results_file(path_, plan, layout, provenance(), MPI_COMM_WORLD);
  const ResultsReader reader(path_);
  EXPECT_EQ(reader.task_count(), plan.tasks.size());
}

TEST_F(ResultsFileTest, ReaderRefusesFilesThatAreNotResults) {
  { std::ofstream(path_) << "not HDF5"; }
  EXPECT_THROW(ResultsReader{path_}, InputError);
  const hid_t file =
      H5Fcreate((dir_ / "other.h5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  H5Fclose(file);
  EXPECT_THROW(ResultsReader{(dir_ / "other.h5").string()}, InputError);
  EXPECT_THROW(ResultsReader{(dir_ / "missing.h5").string()}, InputError);
}

TEST_F(ResultsFileTest, TablesHoldOneValuePerRowInSchemaOrderWithStatus) {
  const sweep::Plan plan = mixed_plan();
  const Layout layout = run::results_layout(plan);
  run::create_results_file(path_, plan, layout, provenance(), MPI_COMM_WORLD);
  const std::uint64_t first = layout.groups()[0].task_ids[0];
  std::vector<FinishedTask> finished{{first, sweep::execute(plan.tasks[first]), 0}};
  {
    ResultsFile file(path_, layout, MPI_COMM_WORLD);
    run::write_finished(file, plan, finished);
    file.close();
  }
  const ResultsReader reader(path_);
  EXPECT_EQ(reader.method_groups(), (std::vector<std::string>{"exact", "simulate", "ldp"}));
  const std::vector<TableColumn> table = reader.read_table("exact");
  std::vector<std::string> names;
  for (const TableColumn& column : table) names.push_back(column.name);

  // Expected: the schema's one-value-per-row columns in order, status and warning (from /tasks)
  // after task_id.
  std::vector<std::string> expected;
  for (const ColumnSpec& spec : sweep::group_columns(sweep::Method::exact)) {
    const bool one_value = spec.type == ColumnType::f64 || spec.type == ColumnType::i64 ||
                           spec.type == ColumnType::str;
    if (one_value) expected.push_back(spec.name);
    if (spec.name == "task_id") {
      expected.push_back("status");
      expected.push_back("warning");
    }
  }
  EXPECT_EQ(names, expected);
  const auto& status = std::get<std::vector<std::string>>(table[1].values);
  ASSERT_EQ(status.size(), 5u);
  EXPECT_EQ(status[0], "done");
  EXPECT_EQ(status[1], "pending");
  const auto& warning = std::get<std::vector<std::string>>(table[2].values);
  ASSERT_EQ(warning.size(), 5u);
  EXPECT_EQ(warning[1], "");  // pending: no warning
  for (const TableColumn& column : table) {
    if (column.name == "EQ") {
      EXPECT_EQ(std::get<std::vector<double>>(column.values)[0],
                std::get<exact::Result>(finished[0].outcome.result).EQ);
    }
    if (column.name == "family") {
      EXPECT_EQ(std::get<std::vector<std::string>>(column.values)[4], "path");
    }
  }
  EXPECT_THROW(reader.read_table("nonsense"), InputError);
  const std::vector<TableColumn> tasks = reader.read_table("tasks");
  EXPECT_EQ(tasks[0].name, "id");
}

TEST_F(ResultsFileTest, TablesReadInPiecesEqualTheDatasets) {
  const sweep::Plan plan = mixed_plan();
  const Layout layout = run::results_layout(plan);
  run::create_results_file(path_, plan, layout, provenance(), MPI_COMM_WORLD);
  std::vector<FinishedTask> finished;
  for (const std::uint64_t id : layout.groups()[0].task_ids.values()) {
    if (id % 3 != 1) finished.push_back({id, sweep::execute(plan.tasks[id]), 0});
  }
  {
    ResultsFile file(path_, layout, MPI_COMM_WORLD);
    run::write_finished(file, plan, finished);
    file.close();
  }
  std::vector<std::int64_t> task_id, N;
  std::vector<double> EQ;
  std::vector<std::string> family;
  std::vector<std::int8_t> statuses;
  {
    const RawFile raw(path_);
    task_id = raw_ints(raw.id, "/exact/task_id");
    N = raw_ints(raw.id, "/exact/N");
    EQ = raw_doubles(raw.id, "/exact/EQ");
    family = raw_text(raw.id, "/exact/family");
    statuses = raw_statuses(raw.id);
  }
  const ResultsReader reader(path_);
  const std::size_t rows = task_id.size();  // 5
  for (const std::uint64_t piece : {1, 2, 3, 5, 100}) {
    for (std::uint64_t first = 0; first < rows + 2; first += piece) {
      const std::vector<TableColumn> table = reader.read_table("exact", first, piece);
      const std::size_t n = first < rows ? std::min<std::size_t>(piece, rows - first) : 0;
      for (const TableColumn& column : table) {
        std::visit([&](const auto& values) { EXPECT_EQ(values.size(), n) << column.name; },
                   column.values);
        for (std::size_t i = 0; i < n; ++i) {
          const std::size_t row = first + i;
          if (column.name == "task_id") {
            EXPECT_EQ(std::get<std::vector<std::int64_t>>(column.values)[i], task_id[row]);
          } else if (column.name == "N") {
            EXPECT_EQ(std::get<std::vector<std::int64_t>>(column.values)[i], N[row]);
          } else if (column.name == "EQ") {
            EXPECT_TRUE(same_double(std::get<std::vector<double>>(column.values)[i], EQ[row]));
          } else if (column.name == "family") {
            EXPECT_EQ(std::get<std::vector<std::string>>(column.values)[i], family[row]);
          } else if (column.name == "status") {
            const auto status =
                static_cast<TaskStatus>(statuses.at(static_cast<std::size_t>(task_id[row])));
            EXPECT_EQ(std::get<std::vector<std::string>>(column.values)[i],
                      qsweep::name_of(status));
          }
        }
      }
      // The columns are the same, in the same order, for every piece (even an empty one).
      ASSERT_EQ(table.size(), reader.read_table("exact").size());
      for (std::size_t c = 0; c < table.size(); ++c) {
        EXPECT_EQ(table[c].name, reader.read_table("exact")[c].name);
      }
    }
  }
}

}  // namespace
}  // namespace qsweep::store
