#include "rounds.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <unordered_map>
#include <variant>

#include "qsweep/common/error.hpp"
#include "qsweep/store/companions.hpp"
#include "qsweep/store/derived_table.hpp"
#include "qsweep/store/results_reader.hpp"
#include "qsweep/sweep/columns.hpp"
#include "qsweep/sweep/thresholds.hpp"

namespace qsweep::run {
namespace {

// A column of `table` by name; InputError naming the file if it has none of numbers.
template <class T>
const std::vector<T>& column(const std::vector<store::TableColumn>& table, const std::string& name,
                             const std::string& where) {
  for (const store::TableColumn& c : table)
    if (c.name == name)
      if (const auto* values = std::get_if<std::vector<T>>(&c.values)) return *values;
  throw InputError(where + ": no column " + name + " of the type refinement reads");
}

// The refining methods' values of every finished task of the file at `path`, as Rounds::propose
// reads them for the tasks of `plan`: a task's row is the file's row of the same key (the plan
// may be an edited sweep's, whose tasks sit elsewhere in the file); a file without keys (format
// version 2) by position.
class FileValues {
 public:
  FileValues(const sweep::Plan& plan, const std::string& path) : plan_(plan), reader_(path) {
    statuses_ = reader_.statuses();
    const std::vector<std::string> keys = reader_.keys();
    for (std::uint64_t id = 0; id < keys.size(); ++id) row_of_key_.emplace(keys[id], id);
    // Tasks are appended round by round: the file may hold the tasks of later rounds too, and a
    // task past its rows has no value.
    for (const sweep::Refinement& r : plan.refinements) {
      const std::string group(sweep::group_name(r.method));
      const std::string where = path + " /" + group;
      Values& values = by_column_[{group, r.quantity}];
      if (!values.y.empty()) continue;
      const std::vector<store::TableColumn> table = reader_.read_table(group);
      const auto& ids = column<std::int64_t>(table, "task_id", where);
      const auto& y = column<double>(table, r.quantity, where);
      const std::vector<double>* hw =
          r.half_width.empty() ? nullptr : &column<double>(table, r.half_width, where);
      for (std::size_t row = 0; row < ids.size(); ++row) {
        const auto id = static_cast<std::uint64_t>(ids[row]);
        values.y[id] = y[row];
        const double h = hw ? (*hw)[row] : 0.0;
        values.hw[id] = std::isnan(h) ? 0.0 : h;  // as sweep::curve_point reads a row
      }
    }
  }

  // Whether the file's tasks are matched by key.
  bool keyed() const { return !row_of_key_.empty(); }

  std::optional<refine::Point> value(const sweep::Refinement& r, std::uint64_t plan_id,
                                     double x) const {
    std::uint64_t id = plan_id;
    if (keyed()) {
      const auto row = row_of_key_.find(plan_.tasks.key(plan_id));
      if (row == row_of_key_.end()) return std::nullopt;  // not in the file
      id = row->second;
    }
    if (id >= statuses_.size()) return std::nullopt;
    const TaskStatus status = statuses_.at(id);
    if (status != TaskStatus::done && status != TaskStatus::unstable) return std::nullopt;
    const Values& values = by_column_.at({std::string(sweep::group_name(r.method)), r.quantity});
    const auto y = values.y.find(id);
    if (y == values.y.end()) return std::nullopt;
    return refine::Point{x, y->second, values.hw.at(id)};
  }

 private:
  struct Values {
    std::map<std::uint64_t, double> y, hw;
  };
  const sweep::Plan& plan_;
  store::ResultsReader reader_;
  std::vector<TaskStatus> statuses_;
  std::unordered_map<std::string, std::uint64_t> row_of_key_;  // the file's task of each key
  std::map<std::pair<std::string, std::string>, Values> by_column_;
};

}  // namespace

std::optional<std::vector<sweep::NewPoint>> propose_from_file(const sweep::Rounds& rounds,
                                                              const sweep::Plan& plan,
                                                              const std::string& path) {
  const FileValues values(plan, path);
  return rounds.propose([&](std::size_t r, std::uint64_t id, double x) {
    return values.value(plan.refinements.at(r), id, x);
  });
}

void replay_rounds(sweep::Plan& plan, sweep::Rounds& rounds, const std::string& path,
                   std::vector<std::vector<sweep::NewPoint>>* added) {
  const std::string file_hash = store::ResultsReader(path).attribute("plan_hash");
  while (!sweep::is_plan_hash(plan, file_hash)) {
    const FileValues values(plan, path);
    // A file without keys has a row for each task of the plan so far: tasks are appended.
    if (!values.keyed() && store::ResultsReader(path).task_count() < plan.tasks.size()) return;
    const std::optional<std::vector<sweep::NewPoint>> points =
        rounds.propose([&](std::size_t r, std::uint64_t id, double x) {
          return values.value(plan.refinements.at(r), id, x);
        });
    if (!points || points->empty()) return;
    rounds.add(plan, *points);
    if (added) added->push_back(*points);
  }
}

Thresholds thresholds_from_file(const sweep::Rounds& rounds, const sweep::Plan& plan,
                                const std::string& path, int below_round) {
  Thresholds out;
  out.table.name = sweep::kThresholdsGroup;
  out.table.description =
      "the thresholds of the refinements with a crossing (refine: {..., crossing: C}): one row per "
      "crossing of each curve, one row for a curve that does not cross; from the finished rows";
  if (!sweep::has_crossings(plan)) return out;
  const FileValues values(plan, path);
  const auto round_of = [&plan](std::uint64_t id) { return plan.tasks.at(id).round; };
  const std::vector<sweep::CurveCrossings> curves = rounds.crossings(
      [&](std::size_t r, std::uint64_t id, double x) -> std::optional<refine::Point> {
        if (round_of(id) >= below_round) return std::nullopt;
        return values.value(plan.refinements.at(r), id, x);
      },
      round_of);
  sweep::ThresholdTable table = sweep::threshold_table(plan, curves);
  out.table.columns = std::move(table.columns);
  out.table.rows = std::move(table.rows);
  for (std::string& warning : table.warnings)
    if (!warning.empty()) out.warnings.push_back(std::move(warning));
  return out;
}

void write_thresholds(const sweep::Plan& plan, const std::string& path) {
  if (!sweep::has_crossings(plan)) return;
  sweep::Plan replayed = sweep::parse_plan(plan.yaml_text, plan.source);
  sweep::Rounds rounds(replayed);
  replay_rounds(replayed, rounds, path);
  if (replayed.hash != plan.hash) return;
  store::write_derived_table(path, thresholds_from_file(rounds, replayed, path).table);
}

void seal_thresholds(const sweep::Rounds& rounds, const sweep::Plan& plan, const std::string& path,
                     store::WriterLock& lock) {
  if (!sweep::has_crossings(plan)) return;
  const Thresholds thresholds = thresholds_from_file(rounds, plan, path);
  if (!store::derived_table_difference(path, thresholds.table).empty()) {
    const std::string temporary = path + std::string(store::kCombinedSuffix);
    std::error_code error;
    std::filesystem::copy_file(path, temporary, std::filesystem::copy_options::overwrite_existing,
                               error);
    if (error)
      throw Error("cannot copy " + path + " to " + temporary +
                  " to store its thresholds: " + error.message());
    try {
      store::write_derived_table(temporary, thresholds.table);
      lock.hold(temporary);
    } catch (...) {
      std::remove(temporary.c_str());
      throw;
    }
    std::filesystem::rename(temporary, path, error);
    if (error) {
      std::remove(temporary.c_str());
      throw Error("cannot rename " + temporary + " to " + path + ": " + error.message());
    }
  }
  std::uint64_t found = 0, converged = 0;
  for (const Row& row : thresholds.table.rows) {
    const auto cell = [&](const char* name) {
      for (std::size_t c = 0; c < thresholds.table.columns.size(); ++c)
        if (thresholds.table.columns[c].name == name) return std::get<std::int64_t>(row.cells[c]);
      throw std::logic_error(std::string("no column ") + name + " in /thresholds");
    };
    found += cell("found") == 1 ? 1 : 0;
    converged += cell("converged") == 1 ? 1 : 0;
  }
  const std::uint64_t rows = thresholds.table.rows.size();
  std::fprintf(stderr,
               "qsweep: thresholds: %llu found (%llu converged), %llu curves without a crossing; "
               "/thresholds of %s holds them\n",
               static_cast<unsigned long long>(found), static_cast<unsigned long long>(converged),
               static_cast<unsigned long long>(rows - found), path.c_str());
  for (const std::string& warning : thresholds.warnings)
    std::fprintf(stderr, "qsweep: warning: %s\n", warning.c_str());
}

}  // namespace qsweep::run
