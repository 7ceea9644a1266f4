#include "qsweep/sweep/columns.hpp"

#include <array>
#include <stdexcept>
#include <unordered_map>

#include "method.hpp"

namespace qsweep::sweep {
namespace {

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
        g.specs.push_back((*g.columns)[i].spec);
        g.index.emplace((*g.columns)[i].spec.name, i);
      }
    }
    return all;
  }();
  return groups.at(static_cast<std::size_t>(method));
}

}  // namespace

std::string_view group_name(Method method) { return name_of(method); }

const std::vector<ColumnSpec>& group_columns(Method method) { return group(method).specs; }

std::size_t planned_length(const Task& task, const ColumnSpec& column) {
  const Group& g = group(task.method());
  const auto it = g.index.find(column.name);
  if (it == g.index.end())
    throw std::logic_error("planned_length: no column '" + column.name + "' in group " +
                           std::string(group_name(task.method())));
  const detail::Column& c = (*g.columns)[it->second];
  return c.length ? c.length(task) : 0;
}

Row make_row(const Task& task, const TaskOutcome& outcome) {
  Row row;
  for (const auto& column : *group(task.method()).columns)
    row.cells.push_back(column.value(task, outcome));
  return row;
}

}  // namespace qsweep::sweep
