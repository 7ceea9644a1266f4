#include "qsweep/store/layout.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <variant>

namespace qsweep::store {
namespace {

ColumnLayout column_layout(const ColumnSpec& spec) {
  ColumnLayout column{spec, 0, {}};
  if (spec.type == ColumnType::str) column.width = spec.width;
  if (is_ragged(spec.type)) column.offsets.push_back(0);
  return column;
}

}  // namespace

bool is_ragged(ColumnType type) {
  return type == ColumnType::f64_ragged || type == ColumnType::i64_ragged;
}

Layout::Layout(const Schema& schema, const PlannedLength& planned_length) {
  bool has_status = false;
  for (const ColumnSpec& spec : schema.task_columns) {
    if (spec.type == ColumnType::f64_vector || is_ragged(spec.type)) {
      throw std::logic_error("/tasks column " + spec.name + " is not one value per row");
    }
    if (spec.type == ColumnType::status) {
      status_column_ = task_columns_.size();
      has_status = true;
    }
    task_columns_.push_back(column_layout(spec));
  }
  if (!has_status) throw std::logic_error("/tasks has no status column");
  if (schema.groups.size() > std::numeric_limits<std::uint8_t>::max()) {
    throw std::logic_error("too many groups");
  }

  constexpr auto kNoGroup = std::numeric_limits<std::uint8_t>::max();
  group_of_task_.assign(schema.task_count, kNoGroup);
  row_of_task_.assign(schema.task_count, 0);
  for (const GroupSchema& group_schema : schema.groups) {
    GroupLayout group;
    group.name = group_schema.name;
    for (const ColumnSpec& spec : group_schema.columns)
      group.columns.push_back(column_layout(spec));
    group.task_ids = group_schema.task_ids;
    for (std::uint64_t row = 0; row < group.rows(); ++row) {
      const std::uint64_t id = group.task_ids[row];
      if (id >= schema.task_count || group_of_task_[id] != kNoGroup ||
          (row > 0 && id <= group.task_ids[row - 1])) {
        throw std::logic_error("group " + group.name + ": task ids must be ascending and unique");
      }
      group_of_task_[id] = static_cast<std::uint8_t>(groups_.size());
      row_of_task_[id] = row;
      for (std::size_t c = 0; c < group.columns.size(); ++c) {
        ColumnLayout& column = group.columns[c];
        if (column.spec.type == ColumnType::f64_vector) {
          column.width = std::max(column.width, planned_length(id, c));
        } else if (is_ragged(column.spec.type)) {
          column.offsets.push_back(column.offsets.back() + planned_length(id, c));
        }
      }
    }
    groups_.push_back(std::move(group));
  }
  if (std::find(group_of_task_.begin(), group_of_task_.end(), kNoGroup) != group_of_task_.end()) {
    throw std::logic_error("a task has no group");
  }
}

std::string Layout::misfit(std::uint64_t task_id, const Row& group_row) const {
  const GroupLayout& group = groups_[group_of(task_id)];
  const std::uint64_t row = row_of(task_id);
  for (std::size_t c = 0; c < group.columns.size(); ++c) {
    const ColumnLayout& column = group.columns[c];
    std::size_t reserved = 0;
    if (column.spec.type == ColumnType::f64_vector) {
      reserved = column.width;
    } else if (is_ragged(column.spec.type)) {
      reserved = column.offsets[row + 1] - column.offsets[row];
    } else {
      continue;
    }
    const CellValue& cell = group_row.cells.at(c);
    const auto* ints = std::get_if<std::vector<std::int64_t>>(&cell);
    const auto* doubles = std::get_if<std::vector<double>>(&cell);
    const auto* repeated = std::get_if<Repeated>(&cell);
    const std::size_t length = ints       ? ints->size()
                               : doubles  ? doubles->size()
                               : repeated ? repeated->count
                                          : 0;
    if (length > reserved) {
      return "internal error: column " + column.spec.name + " has " + std::to_string(length) +
             " values but the plan reserved " + std::to_string(reserved);
    }
  }
  return "";
}

std::string fit_text(const std::string& text, std::size_t width) {
  if (text.size() <= width) return text;
  const std::string ellipsis = "...";
  std::size_t cut = width - ellipsis.size();
  // Do not split a UTF-8 character: back up over continuation bytes (10xxxxxx).
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U) --cut;
  return text.substr(0, cut) + ellipsis;
}

}  // namespace qsweep::store
