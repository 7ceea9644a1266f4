#include "qsweep/sweep/select.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "qsweep/common/closest_match.hpp"
#include "qsweep/common/error.hpp"
#include "qsweep/common/printable.hpp"
#include "qsweep/sweep/columns.hpp"

namespace qsweep::sweep {
namespace {

// The single-value parameter columns a condition may name, with their type, /tasks first.
struct Named {
  std::string name;
  ColumnType type = ColumnType::f64;
  bool of_tasks = false;
};

bool single_value(ColumnType type) {
  return type == ColumnType::f64 || type == ColumnType::i64 || type == ColumnType::i32 ||
         type == ColumnType::u64 || type == ColumnType::str;
}

const std::vector<Named>& selectable() {
  static const std::vector<Named> columns = [] {
    std::vector<Named> all;
    const auto add = [&all](const ColumnSpec& spec, bool of_tasks) {
      if (!spec.parameter || spec.name == "task_id") return;
      for (const Named& named : all)
        if (named.name == spec.name) return;  // a column of several groups (lambda, policy)
      all.push_back({spec.name, spec.type, of_tasks});
    };
    for (const ColumnSpec& spec : task_columns()) add(spec, true);
    for (const Method method : kMethods)
      for (const ColumnSpec& spec : group_columns(method)) add(spec, false);
    return all;
  }();
  return columns;
}

[[noreturn]] void refuse(const std::string& text, const std::string& what) {
  throw InputError(
      fmt::format("--select '{}': {}; expected COLUMN=VALUE[,COLUMN=VALUE...] with "
                  "parameter columns of the results (block=2, lambda=0.5, "
                  "policy=jsq)",
                  printable(text), what));
}

CellValue parse_value(const std::string& text, const Named& column, const std::string& value) {
  const char* begin = value.data();
  const char* end = begin + value.size();
  switch (column.type) {
    case ColumnType::str:
      return value;
    case ColumnType::f64: {
      double number = 0.0;
      const auto [at, error] = std::from_chars(begin, end, number);
      if (error == std::errc() && at == end && !value.empty()) return number;
      break;
    }
    case ColumnType::u64: {
      std::uint64_t number = 0;
      const auto [at, error] = std::from_chars(begin, end, number);
      if (error == std::errc() && at == end && !value.empty()) return number;
      break;
    }
    default: {
      std::int64_t number = 0;
      const auto [at, error] = std::from_chars(begin, end, number);
      if (error == std::errc() && at == end && !value.empty()) return number;
      break;
    }
  }
  refuse(text, fmt::format("'{}' is not a value of {} ({})", printable(value), column.name,
                           column.type == ColumnType::f64 ? "a number" : "an integer"));
}

bool same(const CellValue& cell, const CellValue& wanted) {
  if (const auto* number = std::get_if<double>(&wanted)) {
    const auto* have = std::get_if<double>(&cell);
    if (!have) return false;
    if (std::isnan(*number) || std::isnan(*have)) return std::isnan(*number) && std::isnan(*have);
    return std::abs(*have - *number) <= 1e-12 * std::max(std::abs(*have), std::abs(*number));
  }
  return cell == wanted;
}

}  // namespace

TaskSelection::TaskSelection(const std::vector<std::string>& texts) : texts_(texts) {
  for (const std::string& text : texts) {
    std::vector<Condition>& all_of = any_of_.emplace_back();
    std::size_t start = 0;
    while (start <= text.size()) {
      const std::size_t comma = std::min(text.find(',', start), text.size());
      const std::string part = text.substr(start, comma - start);
      start = comma + 1;
      const std::size_t equals = part.find('=');
      if (equals == std::string::npos || equals == 0)
        refuse(text, fmt::format("'{}' is not COLUMN=VALUE", printable(part)));
      const std::string name = part.substr(0, equals);
      const auto& columns = selectable();
      const auto it = std::find_if(columns.begin(), columns.end(),
                                   [&](const Named& n) { return n.name == name; });
      if (it == columns.end()) {
        std::vector<std::string_view> names;
        names.reserve(columns.size());
        for (const Named& n : columns) names.emplace_back(n.name);
        const std::string guess = closest_match(name, names);
        refuse(text, fmt::format("no parameter column '{}'{}", printable(name),
                                 guess.empty() ? "" : fmt::format(" (did you mean '{}'?)", guess)));
      }
      if (!single_value(it->type))
        refuse(text, fmt::format("{} holds a list per task, not one value", name));
      all_of.push_back(
          {name, it->type, it->of_tasks, parse_value(text, *it, part.substr(equals + 1))});
    }
  }
}

bool TaskSelection::matches(const Task& task) const {
  for (const std::vector<Condition>& all_of : any_of_) {
    bool all = true;
    for (const Condition& condition : all_of) {
      const std::vector<ColumnSpec>& specs =
          condition.of_tasks ? task_columns() : group_columns(task.method());
      const auto it = std::find_if(specs.begin(), specs.end(),
                                   [&](const ColumnSpec& s) { return s.name == condition.column; });
      if (it == specs.end()) {  // a column of another method's group
        all = false;
        break;
      }
      // The cell alone: a row would hash the task's key for every task of a large plan.
      const auto column = static_cast<std::size_t>(it - specs.begin());
      if (!same(condition.of_tasks ? task_cell(task, column) : group_cell(task, column),
                condition.value)) {
        all = false;
        break;
      }
    }
    if (all) return true;
  }
  return false;
}

std::string TaskSelection::text() const { return fmt::format("{}", fmt::join(texts_, " or ")); }

}  // namespace qsweep::sweep
