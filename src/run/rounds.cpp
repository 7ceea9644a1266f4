#include "rounds.hpp"

#include <cmath>
#include <map>
#include <variant>

#include "qsweep/common/error.hpp"
#include "qsweep/store/results_reader.hpp"
#include "qsweep/sweep/columns.hpp"

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

// The refining methods' values of every finished task of the file at `path` (one of `plan`), as
// Rounds::propose reads them.
class FileValues {
 public:
  FileValues(const sweep::Plan& plan, const std::string& path) : reader_(path) {
    statuses_ = reader_.statuses();
    // Tasks are appended round by round: the file may hold the tasks of later rounds too.
    if (statuses_.size() < plan.tasks.size())
      throw InputError(path + " has " + std::to_string(statuses_.size()) + " tasks, the plan " +
                       std::to_string(plan.tasks.size()));
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

  std::optional<refine::Point> value(const sweep::Refinement& r, std::uint64_t id, double x) const {
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
  store::ResultsReader reader_;
  std::vector<TaskStatus> statuses_;
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
  while (plan.hash != file_hash) {
    // The file has a row for each task of the plan so far: tasks are appended, never moved.
    if (store::ResultsReader(path).task_count() < plan.tasks.size()) return;
    const FileValues values(plan, path);
    const std::optional<std::vector<sweep::NewPoint>> points =
        rounds.propose([&](std::size_t r, std::uint64_t id, double x) {
          return values.value(plan.refinements.at(r), id, x);
        });
    if (!points || points->empty()) return;
    rounds.add(plan, *points);
    if (added) added->push_back(*points);
  }
}

}  // namespace qsweep::run
