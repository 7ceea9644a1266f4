#include "qsweep/store/verify.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <utility>

#include "qsweep/store/hdf5.hpp"
#include "row_image.hpp"
#include "table_reader.hpp"

namespace qsweep::store {
namespace {

using detail::ColumnDatasets;
using detail::ColumnImage;
using detail::FileCheck;
using detail::kChunkRows;
using detail::kOneValue;
using detail::open_table;
using detail::Range;
using detail::read_rows;

// Rows [first, first + count) of a table as `row_of` (row number -> its planned cells) plans them.
template <class RowOf>
std::vector<ColumnImage> planned_rows(const std::vector<ColumnLayout>& columns, const Row& others,
                                      std::uint64_t first, std::uint64_t count, RowOf row_of) {
  detail::RowEntries entries;
  entries.reserve(count);
  for (std::uint64_t r = 0; r < count; ++r) entries.emplace_back(first + r, &row_of(first + r));
  return detail::encode_rows(columns, entries, detail::Cells::copied, &others);
}

bool same_bytes(std::span<const unsigned char> a, std::span<const unsigned char> b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

// verify_results of the opened file.
Verification verify_file(const FileCheck& file, const std::string& path, const Layout& layout,
                         const PlannedRows& planned) {
  if (file.attribute("format") != kFormatName) file.damaged("not a qsweep results file");
  const std::string version = file.attribute("format_version");
  const int number = std::atoi(version.c_str());
  if (number < kOldestVerifiedVersion || number > kFormatVersion) {
    throw InputError(path + " is a results file of format version " + version +
                     ", which has no row checksums; this qsweep verifies versions " +
                     std::to_string(kOldestVerifiedVersion) + " to " +
                     std::to_string(kFormatVersion) + " (--force starts it again)");
  }
  const std::uint64_t tasks = layout.task_count();
  if (file.attribute("task_count") != std::to_string(tasks)) {
    file.damaged("task_count is " + file.attribute("task_count") + ", the plan has " +
                 std::to_string(tasks) + " tasks");
  }

  const std::vector<ColumnLayout>& task_columns = layout.task_columns();
  std::vector<ColumnDatasets> task_datasets = open_table(file, "tasks", task_columns, tasks);
  const H5Id checksum_dataset = file.dataset("/tasks/checksum", {tasks}, H5T_INTEGER, 8);
  std::vector<std::vector<ColumnDatasets>> groups;
  for (const GroupLayout& group : layout.groups()) {
    groups.push_back(open_table(file, group.name, group.columns, group.rows()));
  }

  Verification result;
  result.statuses.assign(tasks, TaskStatus::pending);
  const auto report = [&result](std::uint64_t id, const std::string& what) {
    result.damaged.push_back(id);
    if (result.damage.size() < Verification::kMaxDamageMessages) {
      result.damage.push_back("task " + std::to_string(id) + ": " + what);
    }
  };
  // The first parameter column whose bytes in row r of `found` differ from `expected`.
  const auto wrong_parameter =
      [](const std::vector<ColumnLayout>& columns, const std::vector<ColumnImage>& found,
         const std::vector<ColumnImage>& expected, std::size_t r) -> std::optional<std::string> {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (columns[c].spec.parameter && !same_bytes(found[c].row(r), expected[c].row(r))) {
        return columns[c].spec.name;
      }
    }
    return std::nullopt;
  };
  for (std::uint64_t first = 0; first < tasks; first += kChunkRows) {
    const std::uint64_t n = std::min(kChunkRows, tasks - first);
    const std::vector<ColumnImage> found =
        read_rows("tasks", task_columns, task_datasets, first, n);
    std::vector<TaskRows> rows;  // of tasks first + i
    rows.reserve(n);
    for (std::uint64_t i = 0; i < n; ++i) rows.push_back(planned.rows(first + i));
    const std::vector<ColumnImage> expected_tasks =
        planned_rows(task_columns, planned.pending_task, first, n,
                     [&](std::uint64_t id) -> const Row& { return rows[id - first].task; });
    std::vector<std::uint64_t> checksums(n);
    detail::read_range(checksum_dataset.get(), H5T_NATIVE_UINT64, Range{first, n}, kOneValue,
                       checksums.data(), "/tasks/checksum");

    // Each group's rows of these tasks are contiguous (group rows are in task order).
    std::vector<std::uint64_t> group_first(layout.groups().size());
    std::vector<std::vector<ColumnImage>> stored(layout.groups().size());
    std::vector<std::vector<ColumnImage>> expected(layout.groups().size());
    for (std::size_t g = 0; g < layout.groups().size(); ++g) {
      const GroupLayout& group = layout.groups()[g];
      const std::uint64_t lo = group.task_ids.lower_bound(first);
      const std::uint64_t hi = group.task_ids.lower_bound(first + n);
      group_first[g] = lo;
      const auto count = hi - lo;
      if (count == 0) continue;
      stored[g] = read_rows(group.name, group.columns, groups[g], group_first[g], count);
      expected[g] = planned_rows(
          group.columns, planned.pending_groups.at(g), group_first[g], count,
          [&](std::uint64_t row) -> const Row& { return rows[group.task_ids[row] - first].group; });
    }

    const std::size_t status_column = layout.status_column();
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t id = first + i;
      const std::size_t g = layout.group_of(id);
      const GroupLayout& group = layout.groups()[g];
      const std::size_t r = layout.row_of(id) - group_first[g];
      if (const auto name = wrong_parameter(task_columns, found, expected_tasks, i)) {
        report(id, "/tasks/" + *name + " differs from the plan");
        continue;
      }
      if (const auto name = wrong_parameter(group.columns, stored[g], expected[g], r)) {
        report(id, "/" + group.name + "/" + *name + " differs from the plan");
        continue;
      }
      const auto status = static_cast<std::int8_t>(found[status_column].row(i)[0]);
      if (status < 0 || status > static_cast<std::int8_t>(TaskStatus::unstable)) {
        report(id, "unknown status byte " + std::to_string(status));
        continue;
      }
      const std::uint64_t checksum = checksums[i];
      if (status == static_cast<std::int8_t>(TaskStatus::pending)) {
        if (checksum != 0) report(id, "status pending but the row was sealed as finished");
        continue;
      }
      if (checksum == 0) {
        ++result.interrupted;
        continue;
      }
      if (detail::row_checksum(task_columns, found, i, stored[g], r) != checksum) {
        report(id, "checksum mismatch (a stored value changed after the row was written)");
        continue;
      }
      result.statuses[id] = static_cast<TaskStatus>(status);
      ++result.finished;
    }
  }
  return result;
}

}  // namespace

Verification verify_results(const std::string& path, const Layout& layout,
                            const PlannedRows& planned) {
  const FileCheck file(path);
  return file.reading([&] { return verify_file(file, path, layout, planned); });
}

}  // namespace qsweep::store
