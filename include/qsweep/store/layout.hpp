#pragma once
// Where every task's values live in the results file, computed from a schema that the layer
// knowing the tasks gives (so every rank computes the same layout, and the file can be created at
// full size before any task runs). The store knows tables, columns and rows, not tasks or
// kernels. The format itself is documented in docs/results-layout.md.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "qsweep/common/table.hpp"

namespace qsweep::store {

inline constexpr const char* kFormatName = "qsweep-results";
// 2: /tasks/checksum and /tasks/warning. 3: /tasks/key (tasks named by their content, and
// random streams keyed by it). 4: /tasks/reused_from (rows copied from another study by
// run --reuse). 5: /tasks/round (the refinement round that added a task). 6: one meaning per
// column name across the groups (EQ the whole system's jobs; /meanfield's per-server means named
// so: EQ_per_server, ER_per_server), UDUNITS-2 units with a model_units attribute, the refined
// mean field's order-2 and trajectory columns of /meanfield and the /thresholds table. Version 1
// files are read, not verified; versions 2 to 5 are read and verified (with the layout of their
// version) and rewritten in the current version to be continued.
inline constexpr int kFormatVersion = 6;
// The oldest version verify_results accepts.
inline constexpr int kOldestVerifiedVersion = 2;

// A sequence of integers held as runs of arithmetic progressions (a first value and a step,
// modulo 2^64), or as the plain values once runs would take more room: the task ids of a group
// and the offsets of a ragged column are a few runs in most plans (a run of neighbouring tasks,
// rows of one planned length), 8 bytes per task as values (issue 32 item 8: 10^6 tasks of a
// group of ten ragged columns held 88 MB per rank).
class CompactSequence {
 public:
  CompactSequence() = default;
  CompactSequence(const std::vector<std::uint64_t>& values);  // NOLINT(google-explicit-constructor)

  void push_back(std::uint64_t value);
  std::uint64_t operator[](std::uint64_t i) const;
  std::uint64_t back() const { return (*this)[size_ - 1]; }
  std::uint64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Of a non-decreasing sequence: the first index whose value is not less than `value` (size()
  // if none).
  std::uint64_t lower_bound(std::uint64_t value) const;
  std::vector<std::uint64_t> values() const;
  // Bytes held (runs or values).
  std::size_t bytes() const;

 private:
  struct Run {
    std::uint64_t first;  // index of its first value
    std::uint64_t value;  // its first value
    std::uint64_t step;   // value i of the run: value + step * (i - first), modulo 2^64
    std::uint64_t count;
  };
  std::vector<Run> runs_;              // while compact
  std::vector<std::uint64_t> values_;  // once runs took more room
  bool plain_ = false;
  std::uint64_t size_ = 0;
};

// A group of the file with one row per task of some of the tasks (a method's results).
struct GroupSchema {
  std::string name;
  std::vector<ColumnSpec> columns;
  std::vector<std::uint64_t> task_ids;  // ascending: row r holds task task_ids[r]
};

// The tables of a results file. Every task has a row of /tasks and one row in exactly one group.
struct Schema {
  std::uint64_t task_count = 0;
  // /tasks, in file order; one of them is the `status` column. The store appends its own
  // bookkeeping columns, attempts and checksum.
  std::vector<ColumnSpec> task_columns;
  std::vector<GroupSchema> groups;
};

// The most values a task's row can hold in a f64_vector or ragged column of its group, known
// before any task runs: of row `row` of the group of index `group` (task `task_id`) and the
// column of index `column` in it. Asked group after group, row after row.
using PlannedLength = std::function<std::size_t(std::size_t group, std::uint64_t row,
                                                std::uint64_t task_id, std::size_t column)>;

// The rows of one task: its row of /tasks and its row of its group (cells aligned with the
// schema's columns).
struct TaskRows {
  Row task;
  Row group;
};

// The tasks' rows before they run (parameters in place, status pending, results empty). A task's
// own cells are those of the parameter columns (ColumnSpec::parameter); the others are the same
// for every task, given once (creating the file of 10^6 tasks makes each task's rows).
struct PlannedRows {
  // A task's rows of /tasks and of its group, by task id: the cells of the parameter columns (the
  // others are not read). Both at once: the task is made once.
  std::function<TaskRows(std::uint64_t task_id)> rows;
  // The cells of the other columns: of /tasks, and of each group of the layout, in its order.
  Row pending_task;
  std::vector<Row> pending_groups;
};

struct ColumnLayout {
  ColumnSpec spec;
  // str: bytes per value; f64_vector: values per row (max over the group's planned lengths).
  std::size_t width = 0;
  // f64_ragged, i64_ragged: rows + 1 prefix sums of the planned lengths (row r owns
  // [offsets[r], offsets[r+1]) of the flat dataset); empty for the other types.
  CompactSequence offsets;
};

struct GroupLayout {
  std::string name;
  CompactSequence task_ids;           // task of each row, ascending
  std::vector<ColumnLayout> columns;  // as the schema's
  std::uint64_t rows() const { return task_ids.size(); }
};

inline bool is_ragged(ColumnType type) {
  return type == ColumnType::f64_ragged || type == ColumnType::i64_ragged;
}

class Layout {
 public:
  // The schema's task ids are moved into the layout.
  Layout(Schema schema, const PlannedLength& planned_length);

  const std::vector<ColumnLayout>& task_columns() const { return task_columns_; }
  std::size_t status_column() const { return status_column_; }  // index in task_columns()
  const std::vector<GroupLayout>& groups() const { return groups_; }
  std::size_t group_of(std::uint64_t task_id) const { return group_of_task_[task_id]; }
  std::uint64_t row_of(std::uint64_t task_id) const { return row_of_task_[task_id]; }
  std::uint64_t task_count() const { return group_of_task_.size(); }

  // Whether a group row's vectors fit the sizes reserved for the task; "" if they do, else why
  // not.
  std::string misfit(std::uint64_t task_id, const Row& group_row) const;

 private:
  std::vector<ColumnLayout> task_columns_;
  std::size_t status_column_ = 0;
  std::vector<GroupLayout> groups_;
  std::vector<std::uint8_t> group_of_task_;
  CompactSequence row_of_task_;
};

// Bytes that fit in a fixed-length text field of `width` bytes: cut at a UTF-8 character
// boundary, ending in "..." when something was cut.
std::string fit_text(const std::string& text, std::size_t width);

}  // namespace qsweep::store
