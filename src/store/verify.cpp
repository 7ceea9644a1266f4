#include "qsweep/store/verify.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <utility>

#include "qsweep/store/hdf5.hpp"
#include "row_image.hpp"

namespace qsweep::store {
namespace {

using detail::ColumnImage;
using detail::kOneValue;
using detail::Range;
using detail::Shape;

// Rows read per step (bounds memory: a few MB per step for wide rows).
constexpr std::uint64_t kChunkRows = 4096;

class FileCheck {
 public:
  explicit FileCheck(const std::string& path) : path_(path), file_(open_read_only(path)) {}

  [[noreturn]] void damaged(const std::string& what) const {
    throw InputError(path_ + ": damaged structure: " + what +
                     "; it cannot be verified or resumed (--force starts it again)");
  }

  std::string attribute(const std::string& name) const {
    if (!has_attribute(file_.get(), name)) damaged("no root attribute " + name);
    return read_attribute_text(file_.get(), name);
  }

  bool exists(const std::string& object) const {
    return H5Lexists(file_.get(), object.c_str(), H5P_DEFAULT) > 0;
  }

  // Opens a dataset after checking its shape and that its type is of `type_class` and `size`
  // bytes per element.
  H5Id dataset(const std::string& object, const std::vector<hsize_t>& dims, H5T_class_t type_class,
               std::size_t size) const {
    if (!exists(object)) damaged("no dataset " + object);
    H5Id handle(H5Dopen2(file_.get(), object.c_str(), H5P_DEFAULT), H5Dclose, "H5Dopen2", object);
    const H5Id space(H5Dget_space(handle.get()), H5Sclose, "H5Dget_space", object);
    std::vector<hsize_t> found(dims.size() + 1);
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank != static_cast<int>(dims.size())) damaged(object + " has the wrong rank");
    check(H5Sget_simple_extent_dims(space.get(), found.data(), nullptr),
          "H5Sget_simple_extent_dims", object);
    found.resize(dims.size());
    if (found != dims) damaged(object + " has the wrong size");
    const H5Id type(H5Dget_type(handle.get()), H5Tclose, "H5Dget_type", object);
    if (H5Tget_class(type.get()) != type_class || H5Tget_size(type.get()) != size) {
      damaged(object + " has the wrong type");
    }
    return handle;
  }

 private:
  std::string path_;
  H5Id file_;
};

struct ColumnDatasets {
  H5Id data, count;
  H5Id memory_type;
};

// What a column's dataset must be: its HDF5 type class and bytes per element.
std::pair<H5T_class_t, std::size_t> stored_type(const ColumnLayout& column) {
  switch (column.spec.type) {
    case ColumnType::f64:
    case ColumnType::f64_vector:
    case ColumnType::f64_ragged:
      return {H5T_FLOAT, 8};
    case ColumnType::i64:
    case ColumnType::u64:
    case ColumnType::i64_ragged:
      return {H5T_INTEGER, 8};
    case ColumnType::i32:
      return {H5T_INTEGER, 4};
    case ColumnType::str:
      return {H5T_STRING, column.width};
    case ColumnType::status:
      return {H5T_ENUM, 1};
  }
  throw std::logic_error("unknown column type");
}

// The rows [first, first + count) of a table, as detail::encode_rows makes them.
std::vector<ColumnImage> read_rows(const std::string& table,
                                   const std::vector<ColumnLayout>& columns,
                                   std::vector<ColumnDatasets>& datasets, std::uint64_t first,
                                   std::uint64_t count) {
  std::vector<ColumnImage> images(columns.size());
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const ColumnLayout& column = columns[c];
    ColumnDatasets& target = datasets[c];
    ColumnImage& image = images[c];
    const std::string name = "/" + table + "/" + column.spec.name;
    const hid_t type = target.memory_type.get();
    image.row_start.resize(count + 1);
    if (is_ragged(column.spec.type)) {
      const std::uint64_t begin = column.offsets[first];
      for (std::uint64_t r = 0; r <= count; ++r) {
        image.row_start[r] = (column.offsets[first + r] - begin) * 8;
      }
      image.bytes.resize(image.row_start[count]);
      detail::read_range(target.data.get(), type,
                         Range{begin, column.offsets[first + count] - begin}, kOneValue,
                         image.bytes.data(), name);
      image.counts.resize(count);
      detail::read_range(target.count.get(), H5T_NATIVE_INT64, Range{first, count}, kOneValue,
                         image.counts.data(), name + "_count");
    } else {
      const std::size_t row_bytes = detail::row_bytes(column);
      for (std::uint64_t r = 0; r <= count; ++r) image.row_start[r] = r * row_bytes;
      image.bytes.resize(count * row_bytes);
      const Shape shape =
          column.spec.type == ColumnType::f64_vector ? Shape{true, column.width} : kOneValue;
      detail::read_range(target.data.get(), type, Range{first, count}, shape, image.bytes.data(),
                         name);
    }
  }
  return images;
}

// Opens a table's datasets after checking their shapes and types (and a ragged column's
// offsets, which say where every row lives, against the layout's).
std::vector<ColumnDatasets> open_table(const FileCheck& file, const std::string& table,
                                       const std::vector<ColumnLayout>& columns,
                                       std::uint64_t rows) {
  std::vector<ColumnDatasets> datasets;
  for (const ColumnLayout& column : columns) {
    const std::string name = "/" + table + "/" + column.spec.name;
    const auto [type_class, size] = stored_type(column);
    ColumnDatasets& target = datasets.emplace_back();
    target.memory_type = detail::memory_type(column);
    if (column.spec.type == ColumnType::f64_vector) {
      target.data = file.dataset(name, {rows, column.width}, type_class, size);
    } else if (is_ragged(column.spec.type)) {
      target.data = file.dataset(name, {column.offsets.back()}, type_class, size);
      target.count = file.dataset(name + "_count", {rows}, H5T_INTEGER, 8);
      const H5Id offset = file.dataset(name + "_offset", {rows}, H5T_INTEGER, 8);
      for (std::uint64_t first = 0; first < rows; first += kChunkRows) {
        const std::uint64_t count = std::min(kChunkRows, rows - first);
        std::vector<std::int64_t> found(count);
        detail::read_range(offset.get(), H5T_NATIVE_INT64, Range{first, count}, kOneValue,
                           found.data(), name + "_offset");
        for (std::uint64_t r = 0; r < count; ++r) {
          if (found[r] != static_cast<std::int64_t>(column.offsets[first + r])) {
            file.damaged(name + "_offset[" + std::to_string(first + r) +
                         "] is not the plan's offset");
          }
        }
      }
    } else {
      target.data = file.dataset(name, {rows}, type_class, size);
    }
  }
  return datasets;
}

// Rows [first, first + count) of a table as `row_of` (row number -> cells) plans them.
template <class RowOf>
std::vector<ColumnImage> planned_rows(const std::vector<ColumnLayout>& columns, std::uint64_t first,
                                      std::uint64_t count, RowOf row_of) {
  std::vector<Row> rows;
  rows.reserve(count);
  for (std::uint64_t r = 0; r < count; ++r) rows.push_back(row_of(first + r));
  detail::RowEntries entries;
  entries.reserve(count);
  for (std::uint64_t r = 0; r < count; ++r) entries.emplace_back(first + r, &rows[r]);
  return detail::encode_rows(columns, entries);
}

bool same_bytes(std::span<const unsigned char> a, std::span<const unsigned char> b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

}  // namespace

Verification verify_results(const std::string& path, const Layout& layout,
                            const PlannedRows& planned) {
  const FileCheck file(path);
  if (file.attribute("format") != kFormatName) file.damaged("not a qsweep results file");
  const std::string version = file.attribute("format_version");
  if (version != std::to_string(kFormatVersion)) {
    throw InputError(path + " is a results file of format version " + version +
                     ", which has no row checksums; this qsweep verifies and resumes version " +
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
    const std::vector<ColumnImage> expected_tasks =
        planned_rows(task_columns, first, n, planned.task);
    std::vector<std::uint64_t> checksums(n);
    detail::read_range(checksum_dataset.get(), H5T_NATIVE_UINT64, Range{first, n}, kOneValue,
                       checksums.data(), "/tasks/checksum");

    // Each group's rows of these tasks are contiguous (group rows are in task order).
    std::vector<std::uint64_t> group_first(layout.groups().size());
    std::vector<std::vector<ColumnImage>> stored(layout.groups().size());
    std::vector<std::vector<ColumnImage>> expected(layout.groups().size());
    for (std::size_t g = 0; g < layout.groups().size(); ++g) {
      const GroupLayout& group = layout.groups()[g];
      const auto lo = std::lower_bound(group.task_ids.begin(), group.task_ids.end(), first);
      const auto hi = std::lower_bound(lo, group.task_ids.end(), first + n);
      group_first[g] = static_cast<std::uint64_t>(lo - group.task_ids.begin());
      const auto count = static_cast<std::uint64_t>(hi - lo);
      if (count == 0) continue;
      stored[g] = read_rows(group.name, group.columns, groups[g], group_first[g], count);
      expected[g] = planned_rows(group.columns, group_first[g], count, [&](std::uint64_t row) {
        return planned.group(group.task_ids[row]);
      });
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

}  // namespace qsweep::store
