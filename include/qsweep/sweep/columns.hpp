#pragma once
// The results schema: the columns of /tasks and of each method's group (/exact, /simulate, ...)
// and the conversion of a task and its outcome into rows. The store writes any such table
// (qsweep/common/table.hpp) and the CLI prints them (`qsweep eval --json` uses the same names),
// so a column is defined once.
// docs/sweep-format.md ("Result columns") lists every column.
#include <cstdint>
#include <string>
#include <vector>

#include "qsweep/common/table.hpp"
#include "qsweep/sweep/execute.hpp"
#include "qsweep/sweep/task.hpp"

namespace qsweep::sweep {

// Group name ("exact", "simulate", "ldp") and its columns, parameters first, task_id first of all.
std::string_view group_name(Method method);
const std::vector<ColumnSpec>& group_columns(Method method);

// Sizes known at plan time, so the file can be created at full size before any task runs:
// the length this task's row has at most in an f64_vector, f64_ragged or i64_ragged column
// (0 for other columns). `column` is one of group_columns(task.method).
// Ragged rows may be shorter than planned (their _count column says how long); the writer marks
// a task failed rather than write a row longer than planned (store::Layout::misfit), checking the
// row it writes.
std::size_t planned_length(const Task& task, const ColumnSpec& column);
// The same for column `column` (an index into group_columns(task.method)), without looking its
// name up (the layout of a plan asks for every task's).
std::size_t planned_length(const Task& task, std::size_t column);

// Per-type columns of /exact are filled for tasks with N <= 64 and at most this many types
// (count 0 otherwise; the symmetric engines' per-class values are the same for every type).
inline constexpr double kMaxStoredTypes = 10'000;

// The parameters of `task` and the results in `outcome` as one row (status not included).
// Rows of tasks that failed or were unstable carry parameters and NaN / -1 / empty results.
Row make_row(const Task& task, const TaskOutcome& outcome);

// Sets the cells of `row` (a row of the task's group) that are made from another of its results
// (EQ_per_server from EQ, ...) from that cell: what a row copied from a file of an older format
// version, which lacks them, holds in this version (the same bits as make_row gives).
void derive_cells(const Task& task, Row& row);

// make_row(task, {}) with only the cells of its parameter columns made, the others 0.0: a task
// that has not run has the same results (NaN, -1, empty) as any other, and creating the results
// file of 10^6 tasks makes every task's row (store::PlannedRows).
Row make_parameter_row(const Task& task);

// /tasks: one row per task of the plan, all methods. The parameters (id, method, block, seed,
// key) come from the plan; the rest from the outcome and the rank that ran it (reused_from is
// empty: write_combined fills it for a row copied from another study). The store adds its
// own bookkeeping columns (attempts, checksum) after these.
const std::vector<ColumnSpec>& task_columns();
// The row of a task run by `rank` with `outcome`.
Row make_task_row(const Task& task, const TaskOutcome& outcome, int rank);
// The row of a task that has not run: pending, no error, wall_seconds NaN, rank -1.
Row make_task_row(const Task& task);
// make_task_row(task) with only the parameter cells made, the others 0.0 (as make_parameter_row),
// and `key` (task_key(task), which the plan holds: PlanTasks::key) as its key.
Row make_task_parameter_row(const Task& task, const std::string& key);
// Cell `column` of make_task_row(task), and of make_row(task, {}), alone.
CellValue task_cell(const Task& task, std::size_t column);
CellValue group_cell(const Task& task, std::size_t column);

// Widths of the /tasks text columns (bytes; longer text ends in "...").
inline constexpr std::size_t kMethodWidth = 16;
inline constexpr std::size_t kErrorWidth = 256;
inline constexpr std::size_t kWarningWidth = 192;
inline constexpr std::size_t kKeyWidth = 33;  // task_key's 32 hex digits and the NUL
inline constexpr std::size_t kReusedFromWidth = 256;

}  // namespace qsweep::sweep
