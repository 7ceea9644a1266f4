#pragma once
// Reading a results file (serially, read-only): for `qsweep status`, `qsweep export` and the
// resume check. Safe to use on a file that a running job is writing (it sees finished rows).
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "qsweep/common/task_status.hpp"
#include "qsweep/store/hdf5.hpp"

namespace qsweep::store {

// One 1-D dataset of a group, converted for printing.
struct TableColumn {
  std::string name;
  std::variant<std::vector<double>, std::vector<std::int64_t>, std::vector<std::uint64_t>,
               std::vector<std::string>>
      values;
};

struct StatusCounts {
  std::uint64_t pending = 0, done = 0, failed = 0, unstable = 0;
  std::uint64_t total() const { return pending + done + failed + unstable; }
  friend bool operator==(const StatusCounts&, const StatusCounts&) = default;
};

// A failed or unstable task with its message.
struct TaskProblem {
  std::uint64_t id = 0;
  std::string method;
  TaskStatus status = TaskStatus::failed;
  std::string error;
};

namespace detail {
class FileCheck;
}

// Every failure to read the file (a dataset missing or misshapen, HDF5 failing on damaged
// metadata) throws InputError naming the file and what is wrong: the file is bad input.
class ResultsReader {
 public:
  // Throws InputError if `path` cannot be opened, is not a qsweep results file of a format
  // version this build reads, or lacks the datasets of /tasks.
  explicit ResultsReader(const std::string& path);
  ~ResultsReader();
  ResultsReader(const ResultsReader&) = delete;
  ResultsReader& operator=(const ResultsReader&) = delete;

  const std::string& path() const { return path_; }
  // A root attribute as text ("" if absent).
  std::string attribute(const std::string& name) const;
  std::uint64_t task_count() const { return task_count_; }

  std::vector<TaskStatus> statuses() const;
  std::vector<std::int32_t> attempts() const;
  // /tasks/round: the refinement round that added each task; empty for a file of format
  // version 4 or older, which has none.
  std::vector<std::int32_t> rounds() const;
  std::vector<std::string> methods() const;  // per task
  std::vector<std::int32_t> blocks() const;  // per task: /tasks/block
  // /tasks/key per task; empty for a file of format version 2, which has none.
  std::vector<std::string> keys() const;
  // Tasks with the given status in task order, at most `limit` of them.
  std::vector<TaskProblem> problems(TaskStatus status, std::size_t limit) const;
  // Tasks with a warning (their `error` is the warning), at most `limit` of them, and how many
  // there are in all (`count`). None in files of format version 1.
  std::vector<TaskProblem> warnings(std::size_t limit, std::uint64_t& count) const;

  // Method groups present ("exact", "simulate", "ldp"), in the file's order.
  std::vector<std::string> method_groups() const;
  // Derived tables present ("thresholds"; derived_table.hpp), in the file's order: none in files
  // of format version 5 and older but for refining sweeps with a crossing.
  std::vector<std::string> derived_groups() const;
  // The 1-D datasets of a group ("tasks", a method group or a derived table), in schema order:
  // parameters and
  // scalar results. Distributions ([rows, width]) and ragged columns are left out. Method groups
  // get a `status` column (from /tasks) after task_id. Throws InputError for an unknown group.
  // Rows [first_row, first_row + max_rows) only (fewer at the end, none past it): a big group is
  // read in pieces of bounded size.
  std::vector<TableColumn> read_table(
      const std::string& group, std::uint64_t first_row = 0,
      std::uint64_t max_rows = std::numeric_limits<std::uint64_t>::max()) const;

 private:
  // Every group but /tasks in the file's order, each with whether it is a derived table.
  std::vector<std::pair<std::string, bool>> groups() const;
  std::string path_;
  std::unique_ptr<const detail::FileCheck> file_;
  std::uint64_t task_count_ = 0;
};

StatusCounts count_statuses(const std::vector<TaskStatus>& statuses);

}  // namespace qsweep::store
