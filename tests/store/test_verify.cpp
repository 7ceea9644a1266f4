// Row verification: every byte a finished row owns in the file is covered (a changed byte makes
// exactly that row damaged), the states a kill can leave are told apart from damage, and a file
// that is not the plan's is refused. Damage is made by writing the file's bytes directly (the
// datasets are contiguous, so H5Dget_offset says where a cell lives), as a disk or a stray
// process would, not through the store.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "mpi_test_environment.hpp"
#include "qsweep/common/error.hpp"
#include "qsweep/run/plan_results.hpp"
#include "qsweep/store/layout.hpp"
#include "qsweep/store/results_file.hpp"
#include "qsweep/store/verify.hpp"
#include "store_test_util.hpp"

namespace qsweep::store {
namespace {

using run::FinishedTask;
using run::verify_results;
using testing::mixed_plan;
using testing::ResultsFileTest;

// Where the cells of one row of a dataset live in the file: (byte offset, bytes).
struct Cell {
  std::string dataset;
  haddr_t offset = 0;
  std::size_t size = 0;
};

struct DatasetInfo {
  haddr_t offset = 0;
  std::size_t element = 0;  // bytes per element
  std::vector<hsize_t> dims;
};

DatasetInfo info(const std::string& path, const std::string& dataset) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(file, dataset.c_str(), H5P_DEFAULT);
  EXPECT_GE(d, 0) << dataset;
  DatasetInfo result;
  result.offset = H5Dget_offset(d);
  const hid_t type = H5Dget_type(d);
  result.element = H5Tget_size(type);
  const hid_t space = H5Dget_space(d);
  result.dims.resize(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space)));
  H5Sget_simple_extent_dims(space, result.dims.data(), nullptr);
  H5Sclose(space);
  H5Tclose(type);
  H5Dclose(d);
  H5Fclose(file);
  return result;
}

// Every cell of task `id` but /tasks/attempts (bookkeeping written before a task runs).
std::vector<Cell> cells_of_task(const std::string& path, const Layout& layout, std::uint64_t id) {
  std::vector<Cell> cells;
  for (const char* name : {"id", "method", "block", "seed", "status", "error", "warning",
                           "wall_seconds", "rank", "checksum"}) {
    const std::string dataset = std::string("/tasks/") + name;
    const DatasetInfo d = info(path, dataset);
    cells.push_back({dataset, d.offset + id * d.element, d.element});
  }
  const GroupLayout& group = layout.groups()[layout.group_of(id)];
  const std::uint64_t row = layout.row_of(id);
  for (const ColumnLayout& column : group.columns) {
    const std::string dataset = "/" + group.name + "/" + column.spec.name;
    const DatasetInfo d = info(path, dataset);
    if (is_ragged(column.spec.type)) {
      for (std::uint64_t k = column.offsets[row]; k < column.offsets[row + 1]; ++k) {
        cells.push_back({dataset, d.offset + k * d.element, d.element});
      }
      const DatasetInfo count = info(path, dataset + "_count");
      cells.push_back({dataset + "_count", count.offset + row * count.element, count.element});
    } else {
      const hsize_t width = d.dims.size() == 2 ? d.dims[1] : 1;
      for (hsize_t k = 0; k < width; ++k) {
        cells.push_back({dataset, d.offset + (row * width + k) * d.element, d.element});
      }
    }
  }
  return cells;
}

void flip_byte(const std::string& path, haddr_t at, unsigned char mask) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(static_cast<std::streamoff>(at));
  char byte = 0;
  file.read(&byte, 1);
  byte = static_cast<char>(static_cast<unsigned char>(byte) ^ mask);
  file.seekp(static_cast<std::streamoff>(at));
  file.write(&byte, 1);
}

class VerifyTest : public ResultsFileTest {
 protected:
  // A file of the mixed plan with the even tasks and task 7 (simulate) finished.
  void make_half_done_file() {
    run::create_results_file(path_, plan_, layout_, provenance(), MPI_COMM_WORLD);
    ResultsFile file(path_, layout_, MPI_COMM_WORLD);
    std::vector<FinishedTask> finished;
    for (std::uint64_t id = 0; id < plan_.tasks.size(); ++id) {
      if (finished_task(id)) finished.push_back({id, sweep::execute(plan_.tasks[id]), 1});
    }
    run::write_finished(file, plan_, finished);
    file.close();
  }
  static bool finished_task(std::uint64_t id) { return id % 2 == 0 || id == 7; }

  sweep::Plan plan_ = mixed_plan();
  Layout layout_ = run::results_layout(plan_);
};

TEST_F(VerifyTest, AFreshFileIsAllPendingAndAHalfDoneFileVerifies) {
  run::create_results_file(path_, plan_, layout_, provenance(), MPI_COMM_WORLD);
  Verification fresh = verify_results(path_, plan_, layout_);
  EXPECT_EQ(fresh.finished, 0U);
  EXPECT_TRUE(fresh.damaged.empty());
  make_half_done_file();
  const Verification half = verify_results(path_, plan_, layout_);
  EXPECT_TRUE(half.damaged.empty());
  EXPECT_EQ(half.interrupted, 0U);
  std::uint64_t expected_finished = 0;
  for (std::uint64_t id = 0; id < plan_.tasks.size(); ++id) {
    expected_finished += finished_task(id) ? 1 : 0;
    EXPECT_EQ(half.statuses[id] != TaskStatus::pending, finished_task(id)) << id;
  }
  EXPECT_EQ(half.finished, expected_finished);
}

// Every cell of a finished row of each method (its first, middle and last byte, one at a time):
// that row and only that row is damaged; flipping it back makes the file intact again.
TEST_F(VerifyTest, EveryChangedByteOfAFinishedRowIsCaught) {
  make_half_done_file();
  std::size_t checked = 0;
  for (const std::uint64_t id : {std::uint64_t{0}, std::uint64_t{4}, std::uint64_t{7}}) {
    for (const Cell& cell : cells_of_task(path_, layout_, id)) {
      for (const std::size_t byte : std::set<std::size_t>{0, cell.size / 2, cell.size - 1}) {
        flip_byte(path_, cell.offset + byte, 0x10);
        const Verification v = verify_results(path_, plan_, layout_);
        ASSERT_EQ(v.damaged, std::vector<std::uint64_t>{id})
            << cell.dataset << " byte " << byte << " of task " << id;
        flip_byte(path_, cell.offset + byte, 0x10);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 150U);
  EXPECT_TRUE(verify_results(path_, plan_, layout_).damaged.empty());
}

TEST_F(VerifyTest, PlannedCellsOfPendingRowsAreCheckedAgainstThePlan) {
  make_half_done_file();
  const std::uint64_t pending = 1;  // exact ring N = 4
  const DatasetInfo seed = info(path_, "/tasks/seed");
  flip_byte(path_, seed.offset + pending * seed.element, 0x01);
  EXPECT_EQ(verify_results(path_, plan_, layout_).damaged, std::vector<std::uint64_t>{pending});
  flip_byte(path_, seed.offset + pending * seed.element, 0x01);
  const DatasetInfo lambda = info(path_, "/exact/lambda");
  flip_byte(path_, lambda.offset + layout_.row_of(pending) * lambda.element, 0x01);
  EXPECT_EQ(verify_results(path_, plan_, layout_).damaged, std::vector<std::uint64_t>{pending});
}

// What a kill can leave (status written, seal not yet) is "interrupted", not damage; a pending
// status with a seal is a finished row's status overwritten: damage.
TEST_F(VerifyTest, UnsealedRowsAreInterruptedAndSealedPendingRowsDamaged) {
  make_half_done_file();
  const DatasetInfo checksum = info(path_, "/tasks/checksum");
  const DatasetInfo status = info(path_, "/tasks/status");
  {
    std::fstream file(path_, std::ios::in | std::ios::out | std::ios::binary);
    const std::vector<char> zeros(8, 0);
    file.seekp(static_cast<std::streamoff>(checksum.offset + 2 * checksum.element));
    file.write(zeros.data(), 8);  // task 2: done, seal gone
    file.seekp(static_cast<std::streamoff>(status.offset + 4 * status.element));
    file.put(0);  // task 4: sealed, status pending
  }
  const Verification v = verify_results(path_, plan_, layout_);
  EXPECT_EQ(v.interrupted, 1U);
  EXPECT_EQ(v.statuses[2], TaskStatus::pending);
  EXPECT_EQ(v.damaged, std::vector<std::uint64_t>{4});
}

// A task handed out again (it failed before) is unsealed and pending before it runs.
TEST_F(VerifyTest, HandingOutATaskUnsealsIt) {
  make_half_done_file();
  {
    ResultsFile file(path_, layout_, MPI_COMM_WORLD);
    const std::vector<std::uint64_t> ids{2};
    const std::vector<std::int32_t> attempts{2};
    file.write_attempts(ids, attempts);
    file.close();
  }
  const Verification v = verify_results(path_, plan_, layout_);
  EXPECT_TRUE(v.damaged.empty());
  EXPECT_EQ(v.interrupted, 0U);
  EXPECT_EQ(v.statuses[2], TaskStatus::pending);
}

TEST_F(VerifyTest, AFileOfAnotherPlanOrFormatIsRefused) {
  make_half_done_file();
  const sweep::Plan other = sweep::parse_plan(
      "name: other\nblocks:\n  - {method: exact, family: ring, N: 4, lambda: 0.5}\n", "o.yaml");
  EXPECT_THROW(verify_results(path_, other, run::results_layout(other)), InputError);
  const hid_t file = H5Fopen(path_.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  H5Adelete(file, "format_version");
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t attribute =
      H5Acreate2(file, "format_version", H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT);
  const long long one = 1;
  H5Awrite(attribute, H5T_NATIVE_LLONG, &one);
  H5Aclose(attribute);
  H5Sclose(space);
  H5Fclose(file);
  try {
    verify_results(path_, plan_, layout_);
    FAIL() << "a version 1 file was verified";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("format version 1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace qsweep::store
