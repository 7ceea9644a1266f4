#pragma once
// The results schema: for each method, the columns of its HDF5 group (/exact, /simulate, /ldp)
// and the conversion of a finished task into one row. The store writes these generically and the
// CLI prints them (`qsweep eval --json` uses the same names), so a column is defined once.
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "qsweep/sweep/execute.hpp"
#include "qsweep/sweep/task.hpp"

namespace qsweep::sweep {

enum class ColumnType {
  f64,         // one double per row (NaN where not applicable)
  i64,         // one int64 per row (-1 where not applicable)
  str,         // short fixed-length text (names, policies)
  f64_vector,  // [rows, width] doubles, width = max over the group's tasks, NaN padding
  f64_ragged,  // variable length per row: flat dataset + <name>_offset / <name>_count columns
};

struct ColumnSpec {
  std::string name;
  std::string description;
  std::string units;  // "" if dimensionless
  ColumnType type = ColumnType::f64;
};

using CellValue = std::variant<double, std::int64_t, std::string, std::vector<double>>;

struct Row {
  std::vector<CellValue> cells;  // aligned with group_columns(method)
};

// Group name ("exact", "simulate", "ldp") and its columns, parameters first, task_id first of all.
std::string_view group_name(Method method);
const std::vector<ColumnSpec>& group_columns(Method method);

// Sizes known at plan time, so the file can be created at full size before any task runs:
// the length this task's row has in an f64_vector or f64_ragged column (0 for other columns).
std::size_t planned_length(const Task& task, const ColumnSpec& column);

// The parameters of `task` and the results in `outcome` as one row (status not included).
// Rows of tasks that failed or were unstable carry parameters and NaN results.
Row make_row(const Task& task, const TaskOutcome& outcome);

}  // namespace qsweep::sweep
