#include "qsweep/store/verify.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

#include "qsweep/store/hdf5.hpp"
#include "row_image.hpp"

namespace qsweep::store {
namespace {

using detail::ColumnImage;
using detail::kOneValue;
using detail::Range;
using detail::Shape;
using detail::TaskColumns;

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

struct TaskDatasets {
  H5Id id, method, block, seed, status, error, warning, wall_seconds, rank, checksum;
};

struct ColumnDatasets {
  H5Id data, count;
  H5Id text_type;
  Shape shape = kOneValue;
};

// The bytes of rows [first, first + count) of a group, as detail::encode_group_rows makes them.
std::vector<ColumnImage> read_group_rows(const GroupLayout& group,
                                         std::vector<ColumnDatasets>& datasets, std::uint64_t first,
                                         std::uint64_t count) {
  std::vector<ColumnImage> images(group.columns.size());
  for (std::size_t c = 0; c < group.columns.size(); ++c) {
    const ColumnLayout& column = group.columns[c];
    ColumnDatasets& target = datasets[c];
    ColumnImage& image = images[c];
    const std::string name = "/" + group.name + "/" + column.spec.name;
    const hid_t type = detail::memory_type(column, target.text_type);
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
      const std::size_t row_bytes = column.spec.type == sweep::ColumnType::str ? column.width
                                    : column.spec.type == sweep::ColumnType::f64_vector
                                        ? column.width * 8
                                        : 8;
      for (std::uint64_t r = 0; r <= count; ++r) image.row_start[r] = r * row_bytes;
      image.bytes.resize(count * row_bytes);
      detail::read_range(target.data.get(), type, Range{first, count}, target.shape,
                         image.bytes.data(), name);
    }
  }
  return images;
}

void read_task_rows(TaskDatasets& d, const H5Id& method_type, const H5Id& error_type,
                    const H5Id& warning_type, const H5Id& status_type, Range range,
                    TaskColumns& out, std::vector<std::uint64_t>& checksums) {
  detail::read_range(d.id.get(), H5T_NATIVE_INT64, range, kOneValue, out.id.data(), "/tasks/id");
  detail::read_range(d.method.get(), method_type.get(), range, kOneValue, out.method.data(),
                     "/tasks/method");
  detail::read_range(d.block.get(), H5T_NATIVE_INT32, range, kOneValue, out.block.data(),
                     "/tasks/block");
  detail::read_range(d.seed.get(), H5T_NATIVE_UINT64, range, kOneValue, out.seed.data(),
                     "/tasks/seed");
  // The file's own enum type: an unknown byte is read as it is, not converted.
  detail::read_range(d.status.get(), status_type.get(), range, kOneValue, out.status.data(),
                     "/tasks/status");
  detail::read_range(d.error.get(), error_type.get(), range, kOneValue, out.error.data(),
                     "/tasks/error");
  detail::read_range(d.warning.get(), warning_type.get(), range, kOneValue, out.warning.data(),
                     "/tasks/warning");
  detail::read_range(d.wall_seconds.get(), H5T_NATIVE_DOUBLE, range, kOneValue,
                     out.wall_seconds.data(), "/tasks/wall_seconds");
  detail::read_range(d.rank.get(), H5T_NATIVE_INT32, range, kOneValue, out.rank.data(),
                     "/tasks/rank");
  detail::read_range(d.checksum.get(), H5T_NATIVE_UINT64, range, kOneValue, checksums.data(),
                     "/tasks/checksum");
}

bool same_bytes(std::span<const unsigned char> a, std::span<const unsigned char> b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

}  // namespace

Verification verify_results(const std::string& path, const sweep::Plan& plan,
                            const Layout& layout) {
  const FileCheck file(path);
  if (file.attribute("format") != kFormatName) file.damaged("not a qsweep results file");
  const std::string version = file.attribute("format_version");
  if (version != std::to_string(kFormatVersion)) {
    throw InputError(path + " is a results file of format version " + version +
                     ", which has no row checksums; this qsweep verifies and resumes version " +
                     std::to_string(kFormatVersion) + " (--force starts it again)");
  }
  const std::uint64_t tasks = plan.tasks.size();
  if (file.attribute("task_count") != std::to_string(tasks)) {
    file.damaged("task_count is " + file.attribute("task_count") + ", the plan has " +
                 std::to_string(tasks) + " tasks");
  }

  const H5Id method_type = detail::text_type(kMethodWidth);
  const H5Id error_type = detail::text_type(kErrorWidth);
  const H5Id warning_type = detail::text_type(kWarningWidth);
  const H5Id status_type = detail::status_type();
  TaskDatasets t;
  t.id = file.dataset("/tasks/id", {tasks}, H5T_INTEGER, 8);
  t.method = file.dataset("/tasks/method", {tasks}, H5T_STRING, kMethodWidth);
  t.block = file.dataset("/tasks/block", {tasks}, H5T_INTEGER, 4);
  t.seed = file.dataset("/tasks/seed", {tasks}, H5T_INTEGER, 8);
  t.status = file.dataset("/tasks/status", {tasks}, H5T_ENUM, 1);
  t.error = file.dataset("/tasks/error", {tasks}, H5T_STRING, kErrorWidth);
  t.warning = file.dataset("/tasks/warning", {tasks}, H5T_STRING, kWarningWidth);
  t.wall_seconds = file.dataset("/tasks/wall_seconds", {tasks}, H5T_FLOAT, 8);
  t.rank = file.dataset("/tasks/rank", {tasks}, H5T_INTEGER, 4);
  t.checksum = file.dataset("/tasks/checksum", {tasks}, H5T_INTEGER, 8);

  std::vector<std::vector<ColumnDatasets>> groups;
  for (const GroupLayout& group : layout.groups()) {
    std::vector<ColumnDatasets>& columns = groups.emplace_back();
    for (const ColumnLayout& column : group.columns) {
      const std::string name = "/" + group.name + "/" + column.spec.name;
      ColumnDatasets& target = columns.emplace_back();
      switch (column.spec.type) {
        case sweep::ColumnType::f64:
          target.data = file.dataset(name, {group.rows()}, H5T_FLOAT, 8);
          break;
        case sweep::ColumnType::i64:
          target.data = file.dataset(name, {group.rows()}, H5T_INTEGER, 8);
          break;
        case sweep::ColumnType::str:
          target.data = file.dataset(name, {group.rows()}, H5T_STRING, column.width);
          target.text_type = detail::text_type(column.width);
          break;
        case sweep::ColumnType::f64_vector:
          target.data = file.dataset(name, {group.rows(), column.width}, H5T_FLOAT, 8);
          target.shape = Shape{true, column.width};
          break;
        case sweep::ColumnType::f64_ragged:
        case sweep::ColumnType::i64_ragged: {
          target.data = file.dataset(
              name, {column.offsets.back()},
              column.spec.type == sweep::ColumnType::f64_ragged ? H5T_FLOAT : H5T_INTEGER, 8);
          target.count = file.dataset(name + "_count", {group.rows()}, H5T_INTEGER, 8);
          // Offsets are the plan's: they say where every row lives, so they must be right.
          const H5Id offset = file.dataset(name + "_offset", {group.rows()}, H5T_INTEGER, 8);
          for (std::uint64_t first = 0; first < group.rows(); first += kChunkRows) {
            const std::uint64_t count = std::min(kChunkRows, group.rows() - first);
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
          break;
        }
      }
    }
  }

  Verification result;
  result.statuses.assign(tasks, sweep::TaskStatus::pending);
  const auto report = [&result](std::uint64_t id, const std::string& what) {
    result.damaged.push_back(id);
    if (result.damage.size() < Verification::kMaxDamageMessages) {
      result.damage.push_back("task " + std::to_string(id) + ": " + what);
    }
  };
  for (std::uint64_t first = 0; first < tasks; first += kChunkRows) {
    const std::uint64_t n = std::min(kChunkRows, tasks - first);
    TaskColumns found(n);
    std::vector<std::uint64_t> checksums(n);
    read_task_rows(t, method_type, error_type, warning_type, status_type, Range{first, n}, found,
                   checksums);
    TaskColumns planned(n);
    for (std::size_t i = 0; i < n; ++i) planned.set_planned(i, plan.tasks[first + i]);

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
      stored[g] = read_group_rows(group, groups[g], group_first[g], count);
      std::vector<sweep::Row> rows;
      rows.reserve(count);
      std::vector<std::pair<std::uint64_t, const sweep::Row*>> entries;
      for (std::uint64_t r = 0; r < count; ++r) {
        rows.push_back(sweep::make_row(plan.tasks[*(lo + static_cast<std::ptrdiff_t>(r))], {}));
        entries.emplace_back(group_first[g] + r, &rows.back());
      }
      expected[g] = detail::encode_group_rows(group, entries);
    }

    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t id = first + i;
      const sweep::Task& task = plan.tasks[id];
      const std::size_t g = layout.group_index(task.method());
      const GroupLayout& group = layout.groups()[g];
      const std::size_t r = layout.row_of(id) - group_first[g];
      if (found.planned_bytes(i) != planned.planned_bytes(i)) {
        report(id, "/tasks id, method, block or seed differ from the plan");
        continue;
      }
      std::optional<std::string> wrong_parameter;
      for (std::size_t c = 0; c < group.columns.size() && !wrong_parameter; ++c) {
        if (group.columns[c].spec.parameter &&
            !same_bytes(stored[g][c].row(r), expected[g][c].row(r))) {
          wrong_parameter = group.columns[c].spec.name;
        }
      }
      if (wrong_parameter) {
        report(id, "/" + group.name + "/" + *wrong_parameter + " differs from the plan");
        continue;
      }
      const std::int8_t status = found.status[i];
      if (status < 0 || status > static_cast<std::int8_t>(sweep::TaskStatus::unstable)) {
        report(id, "unknown status byte " + std::to_string(status));
        continue;
      }
      const std::uint64_t checksum = checksums[i];
      if (status == static_cast<std::int8_t>(sweep::TaskStatus::pending)) {
        if (checksum != 0) report(id, "status pending but the row was sealed as finished");
        continue;
      }
      if (checksum == 0) {
        ++result.interrupted;
        continue;
      }
      if (detail::row_checksum(found, i, stored[g], r) != checksum) {
        report(id, "checksum mismatch (a stored value changed after the row was written)");
        continue;
      }
      result.statuses[id] = static_cast<sweep::TaskStatus>(status);
      ++result.finished;
    }
  }
  return result;
}

}  // namespace qsweep::store
