#pragma once
// The results schema: for each method, the columns of its HDF5 group (/exact, /simulate, /ldp)
// and the conversion of a finished task into one row. The store writes these generically and the
// CLI prints them (`qsweep eval --json` uses the same names), so a column is defined once.
// docs/sweep-format.md ("Result columns") lists every column.
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
  str,         // short fixed-length text (names, policies), at most kMaxStringLength bytes
  f64_vector,  // [rows, width] doubles, width = max over the group's tasks, NaN padding
  f64_ragged,  // variable length per row: flat dataset + <name>_offset / <name>_count columns
  i64_ragged,  // as f64_ragged with int64 values (server sets as bitmasks, counts)
};

// Longest text in a str column (family and policy names, engine names).
inline constexpr std::size_t kMaxStringLength = 32;

struct ColumnSpec {
  std::string name;
  std::string description;
  std::string units;  // "" if dimensionless
  ColumnType type = ColumnType::f64;
  // A parameter of the task (known from the plan, written at creation), not a result.
  bool parameter = false;
};

using CellValue =
    std::variant<double, std::int64_t, std::string, std::vector<double>, std::vector<std::int64_t>>;

struct Row {
  std::vector<CellValue> cells;  // aligned with group_columns(method)
};

// Group name ("exact", "simulate", "ldp") and its columns, parameters first, task_id first of all.
std::string_view group_name(Method method);
const std::vector<ColumnSpec>& group_columns(Method method);

// Sizes known at plan time, so the file can be created at full size before any task runs:
// the length this task's row has at most in an f64_vector, f64_ragged or i64_ragged column
// (0 for other columns). `column` is one of group_columns(task.method).
// Ragged rows may be shorter than planned (their _count column says how long); execute() marks
// a task failed rather than return a row longer than planned.
std::size_t planned_length(const Task& task, const ColumnSpec& column);

// Per-type columns of /exact are filled for tasks with N <= 64 and at most this many types
// (count 0 otherwise; the symmetric engines' per-class values are the same for every type).
inline constexpr double kMaxStoredTypes = 10'000;

// The parameters of `task` and the results in `outcome` as one row (status not included).
// Rows of tasks that failed or were unstable carry parameters and NaN / -1 / empty results.
Row make_row(const Task& task, const TaskOutcome& outcome);

}  // namespace qsweep::sweep
