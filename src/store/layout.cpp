#include "qsweep/store/layout.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace qsweep::store {
namespace {

constexpr std::size_t kNoGroup = std::numeric_limits<std::size_t>::max();

}  // namespace

bool is_ragged(sweep::ColumnType type) {
  return type == sweep::ColumnType::f64_ragged || type == sweep::ColumnType::i64_ragged;
}

Layout::Layout(const sweep::Plan& plan) {
  group_of_method_.fill(kNoGroup);
  for (const sweep::Task& task : plan.tasks) {
    group_of_method_[static_cast<std::size_t>(task.method())] = 0;  // present
  }
  for (const sweep::Method method : sweep::kMethods) {
    auto& slot = group_of_method_[static_cast<std::size_t>(method)];
    if (slot == kNoGroup) continue;
    slot = groups_.size();
    GroupLayout group;
    group.method = method;
    group.name = std::string(sweep::group_name(method));
    for (const sweep::ColumnSpec& spec : sweep::group_columns(method)) {
      ColumnLayout column{spec, 0, {}};
      if (spec.type == sweep::ColumnType::str) column.width = sweep::kMaxStringLength;
      if (is_ragged(spec.type)) column.offsets.push_back(0);
      group.columns.push_back(std::move(column));
    }
    groups_.push_back(std::move(group));
  }

  row_of_task_.resize(plan.tasks.size());
  for (const sweep::Task& task : plan.tasks) {
    if (task.id >= plan.tasks.size() || &plan.tasks[task.id] != &task) {
      throw std::logic_error("plan tasks must have id == position");
    }
    GroupLayout& group = groups_[group_index(task.method())];
    row_of_task_[task.id] = group.rows();
    group.task_ids.push_back(task.id);

    for (ColumnLayout& column : group.columns) {
      if (column.spec.type == sweep::ColumnType::f64_vector) {
        column.width = std::max(column.width, sweep::planned_length(task, column.spec));
      } else if (is_ragged(column.spec.type)) {
        column.offsets.push_back(column.offsets.back() + sweep::planned_length(task, column.spec));
      }
    }
  }
}

std::size_t Layout::group_index(sweep::Method method) const {
  const std::size_t index = group_of_method_.at(static_cast<std::size_t>(method));
  if (index == kNoGroup) throw std::logic_error("no group for this method in the plan");
  return index;
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
