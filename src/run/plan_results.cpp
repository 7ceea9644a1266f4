#include "qsweep/run/plan_results.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "qsweep/sweep/columns.hpp"

namespace qsweep::run {
namespace {

// The /tasks columns of a file of `format_version`: version 4 has those before `round` (the last),
// version 3 also lacks `reused_from` (the one before), version 2 also `key` (the one before that).
std::vector<ColumnSpec> task_columns(int format_version) {
  std::vector<ColumnSpec> columns = sweep::task_columns();
  if (format_version < 5) columns.pop_back();
  if (format_version < 4) columns.pop_back();
  if (format_version < 3) columns.pop_back();
  return columns;
}

// Columns of /simulate that files before format version 4 do not have.
bool simulate_column_since_4(const std::string& name) {
  return name == "start" || name == "common_random_numbers" || name == "EQ_replications" ||
         name == "ET_replications";
}

// Columns that files before format version 5 do not have: the totals for a common window of
// coupled simulate rows, and the refined mean field's (by their names of version 6).
bool column_since_5(sweep::Method method, const std::string& name) {
  if (method == sweep::Method::simulate)
    return name == "cumulative_time" || name == "cumulative_replications";
  if (method == sweep::Method::meanfield)
    return name == "order" || name == "N" || name == "V" || name == "EQ_per_server_V" ||
           name == "occupancy_N" || name == "EQ_per_server_N" || name == "ET_N";
  return false;
}

// Columns that files before format version 6 do not have: the means per server, made from the
// whole system's (sweep::derive_cells); the refined mean field's 1/N^2 terms and trajectory; the
// sojourn-time distribution at any levels and times of /simulate and /meanfield, and simulate's
// transient mode (docs/sim.md, docs/meanfield.md).
bool column_since_6(sweep::Method method, const std::string& name) {
  if (name == "EQ_per_server") return true;
  if (method == sweep::Method::simulate)
    return name == "EQ_per_server_hw" || name == "quantiles" || name == "tail_times" ||
           name == "observe_times" || name == "T_quantile" || name == "T_quantile_hw" ||
           name == "T_tail" || name == "T_tail_hw" || name == "EQ_t" || name == "EQ_t_hw" ||
           name == "occupancy_t" || name == "occupancy_t_hw";
  if (method == sweep::Method::meanfield)
    return name == "V2" || name == "EQ_per_server_V2" || name == "trajectory_V" ||
           name == "trajectory_N" || name == "trajectory_EQ_per_server_V" || name == "quantiles" ||
           name == "tail_times" || name == "T_quantile" || name == "T_tail";
  return false;
}

// The name a column has in files before format version 6, where /meanfield's per-server means
// were EQ, EQ_V and EQ_N (docs/results-layout.md, "Older files").
std::string name_before_6(sweep::Method method, const std::string& name) {
  if (method != sweep::Method::meanfield) return name;
  if (name == "ER_per_server") return "EQ";
  if (name == "EQ_per_server_V") return "EQ_V";
  if (name == "EQ_per_server_N") return "EQ_N";
  return name;
}

// The columns of /simulate that files before format version 6 have and later ones do not: three
// sojourn-time quantiles, whose levels (0.5, 0.9, 0.99) are the default of `quantiles` and whose
// values T_quantile and T_quantile_hw hold since. They came right after `utilisation_hw`.
const std::vector<ColumnSpec>& retired_quantile_columns() {
  static const std::vector<ColumnSpec> columns = [] {
    std::vector<ColumnSpec> c;
    for (const char* p : {"50", "90", "99"}) {
      c.push_back({fmt::format("T_p{}", p), "sojourn-time quantile", "time", ColumnType::f64});
      c.push_back({fmt::format("T_p{}_hw", p), "95% half-width", "time", ColumnType::f64});
    }
    return c;
  }();
  return columns;
}
constexpr std::string_view kBeforeRetiredQuantiles = "utilisation_hw";

// A column of a file: this version's group_columns(method)[index], or with index kRetired + i
// retired_quantile_columns()[i].
constexpr std::size_t kRetired = std::size_t{1} << 40;

// The columns (group_columns(method) indices, see kRetired) a file of `format_version` has.
std::vector<std::size_t> group_column_indices(sweep::Method method, int format_version) {
  const std::vector<ColumnSpec>& all = sweep::group_columns(method);
  const bool simulate = method == sweep::Method::simulate;
  std::vector<std::size_t> kept;
  for (std::size_t c = 0; c < all.size(); ++c) {
    const bool missing = (format_version < 4 && simulate && simulate_column_since_4(all[c].name)) ||
                         (format_version < 5 && column_since_5(method, all[c].name)) ||
                         (format_version < 6 && column_since_6(method, all[c].name));
    if (!missing) kept.push_back(c);
    if (simulate && format_version < 6 && all[c].name == kBeforeRetiredQuantiles)
      for (std::size_t i = 0; i < retired_quantile_columns().size(); ++i)
        kept.push_back(kRetired + i);
  }
  return kept;
}

const ColumnSpec& column_spec(sweep::Method method, std::size_t index) {
  return index >= kRetired ? retired_quantile_columns().at(index - kRetired)
                           : sweep::group_columns(method).at(index);
}

// group_column_indices of every method, made once.
using ColumnIndices = std::array<std::vector<std::size_t>, sweep::kMethodCount>;
ColumnIndices column_indices(int format_version) {
  ColumnIndices indices;
  for (const sweep::Method method : sweep::kMethods)
    indices[static_cast<std::size_t>(method)] = group_column_indices(method, format_version);
  return indices;
}

// A row of a `method` group in this version as a file of `format_version` holds it (an older
// file has fewer /simulate cells).
Row in_version(Row row, sweep::Method method, int format_version, const ColumnIndices& indices) {
  if (format_version >= store::kFormatVersion) return row;
  Row kept;
  for (const std::size_t c : indices[static_cast<std::size_t>(method)])
    kept.cells.push_back(c >= kRetired ? CellValue{std::numeric_limits<double>::quiet_NaN()}
                                       : std::move(row.cells[c]));
  return kept;
}

// The planned rows of the layout's tables in a file of `format_version` (an older file has fewer
// /tasks and /simulate cells).
store::PlannedRows planned_rows(const sweep::Plan& plan, const store::Layout& layout,
                                int format_version) {
  const std::size_t cells = task_columns(format_version).size();
  const ColumnIndices indices = column_indices(format_version);
  store::PlannedRows planned{
      [&plan, cells, format_version, indices](std::uint64_t id) {
        const sweep::Task task = plan.tasks.at(id);
        store::TaskRows rows{
            sweep::make_task_parameter_row(task, plan.tasks.key(id)),
            in_version(sweep::make_parameter_row(task), task.method(), format_version, indices)};
        rows.task.cells.resize(cells);
        return rows;
      },
      {},
      {}};
  if (layout.task_count() == 0) return planned;
  // The other cells, from a task of each table: every task has the same.
  planned.pending_task = sweep::make_task_row(plan.tasks.at(0));
  planned.pending_task.cells.resize(cells);
  for (const store::GroupLayout& group : layout.groups()) {
    const sweep::Task task = plan.tasks.at(group.task_ids[0]);
    planned.pending_groups.push_back(
        in_version(sweep::make_row(task, {}), task.method(), format_version, indices));
  }
  return planned;
}

}  // namespace

Row current_group_row(const sweep::Plan& plan, std::uint64_t id, int format_version, Row stored) {
  if (format_version >= store::kFormatVersion) return stored;
  const sweep::Method method = plan.tasks.method(id);
  Row row = sweep::make_row(plan.tasks.at(id), {});
  const std::vector<std::size_t> indices = group_column_indices(method, format_version);
  std::vector<double> retired(retired_quantile_columns().size(),
                              std::numeric_limits<double>::quiet_NaN());
  bool has_retired = false;
  for (std::size_t k = 0; k < indices.size() && k < stored.cells.size(); ++k) {
    if (indices[k] >= kRetired) {
      if (const auto* x = std::get_if<double>(&stored.cells[k]))
        retired[indices[k] - kRetired] = *x;
      has_retired = true;
      continue;
    }
    row.cells.at(indices[k]) = std::move(stored.cells[k]);
  }
  if (has_retired) {
    // T_p50, T_p90, T_p99 (each with its half-width) are T_quantile at the default levels, which
    // every task of such a file has (`quantiles` did not exist).
    const std::vector<ColumnSpec>& all = sweep::group_columns(method);
    const auto column = [&all](std::string_view name) {
      return static_cast<std::size_t>(
          std::find_if(all.begin(), all.end(),
                       [name](const ColumnSpec& c) { return c.name == name; }) -
          all.begin());
    };
    row.cells.at(column("T_quantile")) = std::vector<double>{retired[0], retired[2], retired[4]};
    row.cells.at(column("T_quantile_hw")) = std::vector<double>{retired[1], retired[3], retired[5]};
  }
  sweep::derive_cells(plan.tasks[id], row);
  return row;
}

namespace {

// The planned lengths of a column of a group (PlannedLength), row after row, as runs of rows of
// equal lengths: a few runs in most plans.
class LengthRuns {
 public:
  void add(std::uint64_t length, std::uint64_t rows = 1) {
    if (rows == 0) return;
    if (!runs_.empty() && runs_.back().length == length) {
      runs_.back().rows += rows;
    } else {
      runs_.push_back({length, rows});
    }
  }
  // The length of row `row`; rows are asked in ascending order.
  std::uint64_t at(std::uint64_t row) {
    while (row >= start_ + runs_[next_].rows) start_ += runs_[next_++].rows;
    return runs_[next_].length;
  }
  // The runs as bytes (every rank runs this binary), and back.
  void append_bytes(std::string& bytes) const {
    const std::uint64_t count = runs_.size();
    bytes.append(reinterpret_cast<const char*>(&count), sizeof count);
    bytes.append(reinterpret_cast<const char*>(runs_.data()), runs_.size() * sizeof(Run));
  }
  // Appends the runs at `bytes` (as append_bytes wrote them); returns the bytes read.
  std::size_t add_bytes(std::string_view bytes) {
    std::uint64_t count = 0;
    std::memcpy(&count, bytes.data(), sizeof count);
    for (std::uint64_t r = 0; r < count; ++r) {
      Run run{};
      std::memcpy(&run, bytes.data() + sizeof count + r * sizeof(Run), sizeof run);
      add(run.length, run.rows);
    }
    return sizeof count + count * sizeof(Run);
  }

 private:
  struct Run {
    std::uint64_t length;
    std::uint64_t rows;
  };
  std::vector<Run> runs_;
  std::size_t next_ = 0;     // the run of the last row asked
  std::uint64_t start_ = 0;  // its first row
};

bool has_lengths(const ColumnSpec& column) {
  return column.type == ColumnType::f64_vector || store::is_ragged(column.type);
}

// The planned length of column `column` (of the file's columns of the task's method) of `task`.
std::size_t planned_length_in(const sweep::Task& task, const ColumnIndices& indices,
                              std::size_t column) {
  const std::size_t index = indices[static_cast<std::size_t>(task.method())][column];
  return index >= kRetired ? std::size_t{0} : sweep::planned_length(task, index);
}

// Per group and column of `schema`, the planned lengths of its rows: each member of `team` makes
// the tasks of its share of every group's rows (10^6 tasks take a second to make), and they
// exchange the lengths.
std::vector<std::vector<LengthRuns>> team_lengths(const sweep::Plan& plan,
                                                  const store::Schema& schema,
                                                  const ColumnIndices& indices,
                                                  const sweep::PlanTeam& team) {
  std::string mine;
  for (const store::GroupSchema& group : schema.groups) {
    const std::uint64_t rows = group.task_ids.size();
    const auto share = [&](int member) {
      return rows * static_cast<std::uint64_t>(member) / static_cast<std::uint64_t>(team.size);
    };
    std::vector<LengthRuns> lengths(group.columns.size());
    for (std::uint64_t row = share(team.rank); row < share(team.rank + 1); ++row) {
      const sweep::Task task = plan.tasks[group.task_ids[row]];
      for (std::size_t c = 0; c < group.columns.size(); ++c)
        if (has_lengths(group.columns[c])) lengths[c].add(planned_length_in(task, indices, c));
    }
    for (const LengthRuns& column : lengths) column.append_bytes(mine);
  }
  std::vector<std::vector<LengthRuns>> lengths;
  for (const store::GroupSchema& group : schema.groups) lengths.emplace_back(group.columns.size());
  for (const std::string& part : team.all_gather(mine)) {
    std::size_t at = 0;
    for (std::vector<LengthRuns>& group : lengths)
      for (LengthRuns& column : group) at += column.add_bytes(std::string_view(part).substr(at));
  }
  return lengths;
}

}  // namespace

store::Layout results_layout(const sweep::Plan& plan, int format_version,
                             const sweep::PlanTeam* team) {
  store::Schema schema;
  schema.task_count = plan.tasks.size();
  schema.task_columns = task_columns(format_version);
  std::array<bool, sweep::kMethodCount> present{};
  for (std::uint64_t id = 0; id < plan.tasks.size(); ++id)
    present[static_cast<std::size_t>(plan.tasks.method(id))] = true;
  std::array<std::size_t, sweep::kMethodCount> group_of_method{};
  const ColumnIndices indices = column_indices(format_version);
  for (const sweep::Method method : sweep::kMethods) {
    if (!present[static_cast<std::size_t>(method)]) continue;
    group_of_method[static_cast<std::size_t>(method)] = schema.groups.size();
    std::vector<ColumnSpec> columns;
    for (const std::size_t c : indices[static_cast<std::size_t>(method)]) {
      columns.push_back(column_spec(method, c));
      if (format_version < 6) columns.back().name = name_before_6(method, columns.back().name);
    }
    schema.groups.push_back({std::string(sweep::group_name(method)), std::move(columns), {}});
  }
  for (std::uint64_t id = 0; id < plan.tasks.size(); ++id) {
    schema.groups[group_of_method[static_cast<std::size_t>(plan.tasks.method(id))]]
        .task_ids.push_back(id);
  }
  if (team != nullptr && team->size > 1) {
    std::vector<std::vector<LengthRuns>> lengths = team_lengths(plan, schema, indices, *team);
    return store::Layout(std::move(schema),
                         [&lengths](std::size_t group, std::uint64_t row, std::uint64_t,
                                    std::size_t column) { return lengths[group][column].at(row); });
  }
  // The layout asks for the columns of one task after the other: each task is made once.
  std::optional<sweep::Task> task;
  return store::Layout(
      std::move(schema),
      [&plan, &task, &indices](std::size_t, std::uint64_t, std::uint64_t id, std::size_t column) {
        if (!task || task->id != id) task = plan.tasks[id];
        return planned_length_in(*task, indices, column);
      });
}

void create_results_file(const std::string& path, const sweep::Plan& plan,
                         const store::Layout& layout, const store::Provenance& provenance,
                         MPI_Comm comm, store::WriterLock* lock) {
  const store::SweepIdentity sweep{plan.name, plan.source, plan.yaml_text, plan.yaml_sha256,
                                   plan.hash};
  store::ResultsFile::create(path, sweep, layout, planned_rows(plan, layout, store::kFormatVersion),
                             provenance, comm, lock);
}

void write_finished(store::ResultsFile& file, const sweep::Plan& plan,
                    std::vector<FinishedTask>& finished) {
  const store::Layout& layout = file.layout();
  std::vector<store::FinishedRow> rows;
  rows.reserve(finished.size());
  for (FinishedTask& task : finished) {
    const sweep::Task& spec = plan.tasks.at(task.id);
    store::FinishedRow& row = rows.emplace_back();
    row.id = task.id;
    row.rows.group = sweep::make_row(spec, task.outcome);
    const std::string problem = layout.misfit(task.id, row.rows.group);
    if (!problem.empty()) {
      sweep::TaskOutcome failure;
      failure.status = TaskStatus::failed;
      failure.error = problem;
      failure.wall_seconds = task.outcome.wall_seconds;
      task.outcome = std::move(failure);
      row.rows.group = sweep::make_row(spec, task.outcome);
    }
    row.rows.task = sweep::make_task_row(spec, task.outcome, task.rank);
  }
  file.write_finished(rows);
}

store::Verification verify_results(const std::string& path, const sweep::Plan& plan,
                                   const store::Layout& layout, int format_version) {
  return store::verify_results(path, layout, planned_rows(plan, layout, format_version));
}

}  // namespace qsweep::run
