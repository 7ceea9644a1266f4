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

// Runs beyond this many are kept only while they take less room than the values.
constexpr std::size_t kFewRuns = 16;

}  // namespace

CompactSequence::CompactSequence(const std::vector<std::uint64_t>& values) {
  for (const std::uint64_t value : values) push_back(value);
}

void CompactSequence::push_back(std::uint64_t value) {
  ++size_;
  if (plain_) {
    values_.push_back(value);
    return;
  }
  if (!runs_.empty()) {
    Run& last = runs_.back();
    if (last.count == 1) {
      last.step = value - last.value;
      last.count = 2;
      return;
    }
    if (value == last.value + last.step * last.count) {
      ++last.count;
      return;
    }
  }
  runs_.push_back(Run{size_ - 1, value, 0, 1});
  if (runs_.size() > kFewRuns && runs_.size() * sizeof(Run) > size_ * sizeof(std::uint64_t)) {
    values_.reserve(size_);
    for (const Run& run : runs_)
      for (std::uint64_t k = 0; k < run.count; ++k) values_.push_back(run.value + run.step * k);
    runs_ = {};
    plain_ = true;
  }
}

std::uint64_t CompactSequence::operator[](std::uint64_t i) const {
  if (plain_) return values_[i];
  if (runs_.size() == 1) return runs_[0].value + runs_[0].step * i;  // most columns of most plans
  const auto after =
      std::upper_bound(runs_.begin(), runs_.end(), i,
                       [](std::uint64_t index, const Run& run) { return index < run.first; });
  const Run& run = *(after - 1);
  return run.value + run.step * (i - run.first);
}

std::uint64_t CompactSequence::lower_bound(std::uint64_t value) const {
  std::uint64_t lo = 0;
  std::uint64_t hi = size_;
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if ((*this)[mid] < value) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

std::vector<std::uint64_t> CompactSequence::values() const {
  if (plain_) return values_;
  std::vector<std::uint64_t> all;
  all.reserve(size_);
  for (const Run& run : runs_)
    for (std::uint64_t k = 0; k < run.count; ++k) all.push_back(run.value + run.step * k);
  return all;
}

std::size_t CompactSequence::bytes() const {
  return runs_.capacity() * sizeof(Run) + values_.capacity() * sizeof(std::uint64_t);
}

Layout::Layout(Schema schema, const PlannedLength& planned_length) {
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
  std::vector<std::uint64_t> next_row(schema.groups.size(), 0);
  for (GroupSchema& group_schema : schema.groups) {
    GroupLayout group;
    group.name = group_schema.name;
    for (const ColumnSpec& spec : group_schema.columns)
      group.columns.push_back(column_layout(spec));
    // The planned lengths' sums as they grow, off the compact offsets.
    std::vector<std::uint64_t> ends(group.columns.size(), 0);
    std::vector<std::size_t> planned;  // the columns with planned lengths
    for (std::size_t c = 0; c < group.columns.size(); ++c)
      if (group.columns[c].spec.type == ColumnType::f64_vector ||
          is_ragged(group.columns[c].spec.type))
        planned.push_back(c);
    for (std::uint64_t row = 0; row < group_schema.task_ids.size(); ++row) {
      const std::uint64_t id = group_schema.task_ids[row];
      if (id >= schema.task_count || group_of_task_[id] != kNoGroup ||
          (row > 0 && id <= group_schema.task_ids[row - 1])) {
        throw std::logic_error("group " + group.name + ": task ids must be ascending and unique");
      }
      group_of_task_[id] = static_cast<std::uint8_t>(groups_.size());
      group.task_ids.push_back(id);
      for (const std::size_t c : planned) {
        ColumnLayout& column = group.columns[c];
        if (column.spec.type == ColumnType::f64_vector) {
          column.width = std::max(column.width, planned_length(groups_.size(), row, id, c));
        } else if (is_ragged(column.spec.type)) {
          ends[c] += planned_length(groups_.size(), row, id, c);
          column.offsets.push_back(ends[c]);
        }
      }
    }
    group_schema.task_ids = {};  // its memory back before the next group's
    groups_.push_back(std::move(group));
  }
  // Each task's row in its group, in task order.
  for (std::uint64_t id = 0; id < schema.task_count; ++id) {
    const std::uint8_t g = group_of_task_[id];
    if (g == kNoGroup) throw std::logic_error("a task has no group");
    row_of_task_.push_back(next_row[g]++);
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
