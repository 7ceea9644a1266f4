#include "qsweep/sweep/columns.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>

#include "method.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::sweep {
namespace {

// The spec as the file states it: `units` in UDUNITS-2 (docs/results-layout.md, "Units"), from
// the unit a method gives: a count or a time of the model is the number "1" with its unit in the
// model's terms kept as `model_units`; wall-clock seconds are "s"; any other number "1".
ColumnSpec with_udunits(ColumnSpec spec) {
  static const std::unordered_map<std::string, std::pair<std::string, std::string>> units{
      {"jobs", {"1", "jobs"}}, {"replicas", {"1", "replicas"}}, {"jobs^2", {"1", "jobs^2"}},
      {"time", {"1", "time"}}, {"1/time", {"1", "1/time"}},     {"s", {"s", ""}},
      {"1/s", {"s-1", ""}}};
  if (const auto it = units.find(spec.units); it != units.end()) {
    spec.units = it->second.first;
    spec.model_units = it->second.second;
  } else if (!spec.units.empty()) {
    throw std::logic_error("column " + spec.name + ": unknown unit '" + spec.units + "'");
  } else if (spec.type != ColumnType::str && spec.type != ColumnType::status) {
    spec.units = "1";
  }
  return spec;
}

struct Group {
  const std::vector<detail::Column>* columns = nullptr;
  std::vector<ColumnSpec> specs;
  std::unordered_map<std::string, std::size_t> index;
};

const Group& group(Method method) {
  static const std::array<Group, kMethodCount> groups = [] {
    std::array<Group, kMethodCount> all;
    for (Method m : kMethods) {
      Group& g = all[static_cast<std::size_t>(m)];
      g.columns = &detail::method_adapter(m).columns;
      for (std::size_t i = 0; i < g.columns->size(); ++i) {
        g.specs.push_back(with_udunits((*g.columns)[i].spec));
        g.index.emplace((*g.columns)[i].spec.name, i);
      }
    }
    return all;
  }();
  return groups.at(static_cast<std::size_t>(method));
}

// A column of /tasks: its spec and its cell for a task, its outcome and the rank that ran it.
struct TaskColumn {
  ColumnSpec spec;
  std::function<CellValue(const Task&, const TaskOutcome&, int rank)> value;
};

ColumnSpec text_spec(std::string name, std::string description, bool parameter, std::size_t width) {
  return {std::move(name), std::move(description), "", ColumnType::str, parameter, width};
}

// The one list of /tasks columns, in file order. A row's checksum covers its parameters, then
// its other columns, each in this order (docs/results-layout.md, "Checksums").
const std::vector<TaskColumn>& task_table() {
  static const std::vector<TaskColumn> table{
      {{"id", "task id = row in /tasks = position in the expanded plan", "", ColumnType::i64, true},
       [](const Task& t, const TaskOutcome&, int) -> CellValue {
         return static_cast<std::int64_t>(t.id);
       }},
      {text_spec("method", "method: " + method_list(), true, kMethodWidth),
       [](const Task& t, const TaskOutcome&, int) -> CellValue {
         return std::string(name_of(t.method()));
       }},
      {{"block", "0-based index of the sweep block the task came from", "", ColumnType::i32, true},
       [](const Task& t, const TaskOutcome&, int) -> CellValue {
         return static_cast<std::int64_t>(t.block);
       }},
      {{"status",
        "0 pending (not run, or interrupted), 1 done, 2 failed (see error), "
        "3 unstable (parameters outside the stability region; the violating set is in error)",
        "", ColumnType::status},
       [](const Task&, const TaskOutcome& o, int) -> CellValue {
         return static_cast<std::int64_t>(o.status);
       }},
      {text_spec("error",
                 "failed: the error message; unstable: the violating server set "
                 "(cut to 256 bytes)",
                 false, kErrorWidth),
       [](const Task&, const TaskOutcome& o, int) -> CellValue { return o.error; }},
      {text_spec("warning",
                 "why a result should not be trusted silently (\"; \"-separated, "
                 "cut to 192 bytes; empty: none)",
                 false, kWarningWidth),
       [](const Task&, const TaskOutcome& o, int) -> CellValue { return o.warning; }},
      {{"wall_seconds", "wall-clock time of the task's last run (NaN if never run)", "s",
        ColumnType::f64, false, kMaxStringLength, true},
       [](const Task&, const TaskOutcome& o, int) -> CellValue { return o.wall_seconds; }},
      {{"rank", "MPI rank of the task's last run (-1 if never run)", "", ColumnType::i32, false,
        kMaxStringLength, true},
       [](const Task&, const TaskOutcome&, int rank) -> CellValue {
         return static_cast<std::int64_t>(rank);
       }},
      {{"seed", "sweep seed (part of the task's key)", "", ColumnType::u64, true},
       [](const Task& t, const TaskOutcome&, int) -> CellValue { return t.seed; }},
      // Last: files of format version 2 have the columns before it (plan_results.cpp).
      {text_spec("key",
                 "what the task computes, wherever it sits in a plan: 128 bits of the SHA-256 of "
                 "its method, parameters and seed, in hex; its random streams are "
                 "Philox(key, replication)",
                 true, kKeyWidth),
       [](const Task& t, const TaskOutcome&, int) -> CellValue { return task_key(t); }},
      // Last: files of format version 3 have the columns before it (plan_results.cpp). Written
      // only where a row is copied from another study's file (run --reuse).
      {{"reused_from",
        "where the row was copied from by run --reuse: the source file, its study and when it "
        "was created (empty: computed for this file's study)",
        "", ColumnType::str, false, kReusedFromWidth, true},
       [](const Task&, const TaskOutcome&, int) -> CellValue { return std::string(); }},
      // Last: files of format version 4 have the columns before it (plan_results.cpp).
      {{"round",
        "the refinement round that added the task (0: a point of the sweep itself; "
        "docs/sweep-format.md, \"Refinement\")",
        "", ColumnType::i32, true},
       [](const Task& t, const TaskOutcome&, int) -> CellValue {
         return static_cast<std::int64_t>(t.round);
       }},
  };
  return table;
}

}  // namespace

const std::vector<ColumnSpec>& task_columns() {
  static const std::vector<ColumnSpec> specs = [] {
    std::vector<ColumnSpec> all;
    for (const TaskColumn& column : task_table()) all.push_back(with_udunits(column.spec));
    return all;
  }();
  return specs;
}

Row make_task_row(const Task& task, const TaskOutcome& outcome, int rank) {
  Row row;
  for (const TaskColumn& column : task_table())
    row.cells.push_back(column.value(task, outcome, rank));
  return row;
}

Row make_task_row(const Task& task) {
  TaskOutcome never_run;
  never_run.wall_seconds = std::nan("");
  return make_task_row(task, never_run, -1);
}

Row make_task_parameter_row(const Task& task, const std::string& key) {
  static const std::size_t key_column = static_cast<std::size_t>(
      std::find_if(task_table().begin(), task_table().end(),
                   [](const TaskColumn& column) { return column.spec.name == "key"; }) -
      task_table().begin());
  const TaskOutcome never_run;
  Row row;
  row.cells.reserve(task_table().size());
  for (std::size_t c = 0; c < task_table().size(); ++c) {
    const TaskColumn& column = task_table()[c];
    row.cells.push_back(c == key_column         ? CellValue{key}
                        : column.spec.parameter ? column.value(task, never_run, -1)
                                                : CellValue{});
  }
  return row;
}

CellValue task_cell(const Task& task, std::size_t column) {
  TaskOutcome never_run;
  never_run.wall_seconds = std::nan("");
  return task_table().at(column).value(task, never_run, -1);
}

CellValue group_cell(const Task& task, std::size_t column) {
  return group(task.method()).columns->at(column).value(task, {});
}

std::string_view group_name(Method method) { return name_of(method); }

const std::vector<ColumnSpec>& group_columns(Method method) { return group(method).specs; }

std::size_t planned_length(const Task& task, const ColumnSpec& column) {
  const Group& g = group(task.method());
  const auto it = g.index.find(column.name);
  if (it == g.index.end())
    throw std::logic_error("planned_length: no column '" + column.name + "' in group " +
                           std::string(group_name(task.method())));
  return planned_length(task, it->second);
}

std::size_t planned_length(const Task& task, std::size_t column) {
  const detail::Column& c = group(task.method()).columns->at(column);
  return c.length ? c.length(task) : 0;
}

Row make_row(const Task& task, const TaskOutcome& outcome) {
  Row row;
  for (const auto& column : *group(task.method()).columns)
    row.cells.push_back(column.value(task, outcome));
  return row;
}

Row make_parameter_row(const Task& task) {
  const TaskOutcome never_run;
  const std::vector<detail::Column>& columns = *group(task.method()).columns;
  Row row;
  row.cells.reserve(columns.size());
  for (const auto& column : columns)
    row.cells.push_back(column.spec.parameter ? column.value(task, never_run) : CellValue{});
  return row;
}

void derive_cells(const Task& task, Row& row) {
  const Group& g = group(task.method());
  for (std::size_t c = 0; c < g.columns->size(); ++c) {
    const detail::Column& column = (*g.columns)[c];
    if (!column.derive) continue;
    const double source = std::get<double>(row.cells.at(g.index.at(column.source)));
    row.cells.at(c) = column.derive(task, source);
  }
}

}  // namespace qsweep::sweep
