#include "qsweep/store/results_reader.hpp"

#include <H5DSpublic.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <set>

#include "qsweep/common/printable.hpp"
#include "qsweep/store/derived_table.hpp"
#include "qsweep/store/layout.hpp"
#include "table_reader.hpp"

namespace qsweep::store {
namespace {

H5Id open_dataset(hid_t file, const std::string& path) {
  return H5Id(H5Dopen2(file, path.c_str(), H5P_DEFAULT), H5Dclose, "H5Dopen2", path);
}

// Dimensions of a dataset.
std::vector<hsize_t> dims_of(hid_t dataset, const std::string& path) {
  const H5Id space(H5Dget_space(dataset), H5Sclose, "H5Dget_space", path);
  const int rank =
      check(H5Sget_simple_extent_ndims(space.get()), "H5Sget_simple_extent_ndims", path);
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  check(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr), "H5Sget_simple_extent_dims",
        path);
  return dims;
}

// Rows of a 1-D dataset to read: [start, start + count), or the rows listed (ascending).
struct RowSelection {
  hsize_t start = 0;
  hsize_t count = 0;
  std::vector<hsize_t> listed;  // when not empty, these rows instead of the range
  hsize_t size() const { return listed.empty() ? count : listed.size(); }
};

RowSelection all_rows(hid_t dataset, const std::string& path) {
  return {0, dims_of(dataset, path).at(0), {}};
}

// Reads the selected rows of a 1-D dataset as `memory_type` into `out` (rows.size() values).
void read_rows(hid_t dataset, const std::string& path, hid_t memory_type, const RowSelection& rows,
               void* out) {
  const hsize_t n = rows.size();
  if (n == 0) return;
  const H5Id file_space(H5Dget_space(dataset), H5Sclose, "H5Dget_space", path);
  if (rows.listed.empty()) {
    check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &rows.start, nullptr, &rows.count,
                              nullptr),
          "H5Sselect_hyperslab", path);
  } else {
    check(H5Sselect_elements(file_space.get(), H5S_SELECT_SET, n, rows.listed.data()),
          "H5Sselect_elements", path);
  }
  const H5Id memory_space(H5Screate_simple(1, &n, nullptr), H5Sclose, "H5Screate_simple", path);
  check(H5Dread(dataset, memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT, out),
        "H5Dread", path);
}

template <class T>
std::vector<T> read_values(hid_t dataset, const std::string& path, hid_t memory_type,
                           const RowSelection& rows) {
  std::vector<T> values(rows.size());
  read_rows(dataset, path, memory_type, rows, values.data());
  return values;
}

// Fixed-length text.
std::vector<std::string> read_text(hid_t dataset, const std::string& path,
                                   const RowSelection& rows) {
  const H5Id type(H5Dget_type(dataset), H5Tclose, "H5Dget_type", path);
  if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) > 0) {
    throw StoreError(path + " is not fixed-length text");
  }
  const std::size_t width = H5Tget_size(type.get());
  std::vector<char> buffer(rows.size() * width);
  read_rows(dataset, path, type.get(), rows, buffer.data());
  std::vector<std::string> values(rows.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    const char* begin = buffer.data() + i * width;
    values[i].assign(begin, std::find(begin, begin + width, '\0'));
  }
  return values;
}

// The status enum read into int8 (enum-to-integer conversion is not an HDF5 conversion, so the
// file's own enum type is the memory type).
std::vector<TaskStatus> read_statuses(hid_t dataset, const RowSelection& rows) {
  const std::string path = "/tasks/status";
  const H5Id type(H5Dget_type(dataset), H5Tclose, "H5Dget_type", path);
  if (H5Tget_class(type.get()) != H5T_ENUM || H5Tget_size(type.get()) != 1) {
    throw StoreError(path + " is not an 8-bit enum");
  }
  const std::vector<std::int8_t> raw = read_values<std::int8_t>(dataset, path, type.get(), rows);
  std::vector<TaskStatus> statuses(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] < 0 || raw[i] > static_cast<std::int8_t>(TaskStatus::unstable)) {
      throw StoreError(path + " holds an unknown status " + std::to_string(raw[i]));
    }
    statuses[i] = static_cast<TaskStatus>(raw[i]);
  }
  return statuses;
}

std::vector<std::string> status_names(const std::vector<TaskStatus>& statuses) {
  std::vector<std::string> names;
  names.reserve(statuses.size());
  for (const TaskStatus status : statuses) names.emplace_back(qsweep::name_of(status));
  return names;
}

herr_t collect_link_name(hid_t /*group*/, const char* name, const H5L_info_t* /*info*/,
                         void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}

// Datasets of a group in creation (schema) order.
std::vector<std::string> member_names(hid_t group, const std::string& path) {
  std::vector<std::string> names;
  hsize_t index = 0;
  check(H5Literate(group, H5_INDEX_CRT_ORDER, H5_ITER_INC, &index, collect_link_name, &names),
        "H5Literate", path);
  return names;
}

// Ragged columns (flat values with <name>_offset and <name>_count) are not one value per row.
bool is_ragged_part(const std::string& name, const std::set<std::string>& names) {
  if (names.count(name + "_offset") > 0) return true;
  for (const std::string suffix : {"_offset", "_count"}) {
    if (name.size() > suffix.size() && name.ends_with(suffix) &&
        names.count(name.substr(0, name.size() - suffix.size())) > 0) {
      return true;
    }
  }
  return false;
}

TableColumn read_column(hid_t dataset, const std::string& path, const std::string& name,
                        const RowSelection& rows) {
  const H5Id type(H5Dget_type(dataset), H5Tclose, "H5Dget_type", path);
  switch (H5Tget_class(type.get())) {
    case H5T_FLOAT:
      return {name, read_values<double>(dataset, path, H5T_NATIVE_DOUBLE, rows)};
    case H5T_INTEGER:
      if (H5Tget_sign(type.get()) == H5T_SGN_NONE) {
        return {name, read_values<std::uint64_t>(dataset, path, H5T_NATIVE_UINT64, rows)};
      }
      return {name, read_values<std::int64_t>(dataset, path, H5T_NATIVE_INT64, rows)};
    case H5T_STRING:
      return {name, read_text(dataset, path, rows)};
    case H5T_ENUM:  // /tasks/status
      return {name, status_names(read_statuses(dataset, rows))};
    default:
      throw StoreError(path + " has a type qsweep does not export");
  }
}

}  // namespace

ResultsReader::ResultsReader(const std::string& path)
    : path_(path), file_(std::make_unique<detail::FileCheck>(path)) {
  const detail::FileCheck& file = *file_;
  file.reading([&] {
    if (!has_attribute(file.get(), "format") ||
        read_attribute_text(file.get(), "format") != kFormatName) {
      throw InputError(path + ": not a qsweep results file (no format = \"" +
                       std::string(kFormatName) + "\" attribute)");
    }
    const std::string text = file.attribute("format_version");
    int version = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), version);
    if (error != std::errc() || end != text.data() + text.size() || version < 1)
      file.damaged("format_version is " + printable(text) + ", not a format version");
    if (version > kFormatVersion) {
      throw InputError(path + ": results format version " + std::to_string(version) +
                       " is newer than this qsweep reads (" + std::to_string(kFormatVersion) + ")");
    }
    // The datasets of /tasks that every reading uses, so that a foreign or damaged file is
    // refused here, naming what it lacks.
    task_count_ = file.rows("/tasks/status", H5T_ENUM, 1);
    file.dataset("/tasks/method", {task_count_}, H5T_STRING, 0);
    file.dataset("/tasks/error", {task_count_}, H5T_STRING, 0);
    file.dataset("/tasks/attempts", {task_count_}, H5T_INTEGER, 0);
    if (file.exists("/tasks/warning")) file.dataset("/tasks/warning", {task_count_}, H5T_STRING, 0);
  });
}

ResultsReader::~ResultsReader() = default;

std::string ResultsReader::attribute(const std::string& name) const {
  return file_->reading([&]() -> std::string {
    if (!has_attribute(file_->get(), name)) return "";
    return read_attribute_text(file_->get(), name);
  });
}

std::vector<TaskStatus> ResultsReader::statuses() const {
  return file_->reading([&]() -> std::vector<TaskStatus> {
    const H5Id dataset = open_dataset(file_->get(), "/tasks/status");
    return read_statuses(dataset.get(), all_rows(dataset.get(), "/tasks/status"));
  });
}

std::vector<std::int32_t> ResultsReader::attempts() const {
  return file_->reading([&]() -> std::vector<std::int32_t> {
    const H5Id dataset = open_dataset(file_->get(), "/tasks/attempts");
    return read_values<std::int32_t>(dataset.get(), "/tasks/attempts", H5T_NATIVE_INT32,
                                     all_rows(dataset.get(), "/tasks/attempts"));
  });
}

std::vector<std::int32_t> ResultsReader::rounds() const {
  return file_->reading([&]() -> std::vector<std::int32_t> {
    if (check(H5Lexists(file_->get(), "/tasks/round", H5P_DEFAULT), "H5Lexists", "/tasks/round") <=
        0)
      return {};
    const H5Id dataset = open_dataset(file_->get(), "/tasks/round");
    return read_values<std::int32_t>(dataset.get(), "/tasks/round", H5T_NATIVE_INT32,
                                     all_rows(dataset.get(), "/tasks/round"));
  });
}

std::vector<std::int32_t> ResultsReader::blocks() const {
  return file_->reading([&]() -> std::vector<std::int32_t> {
    const H5Id dataset = open_dataset(file_->get(), "/tasks/block");
    return read_values<std::int32_t>(dataset.get(), "/tasks/block", H5T_NATIVE_INT32,
                                     all_rows(dataset.get(), "/tasks/block"));
  });
}

std::vector<std::string> ResultsReader::keys() const {
  return file_->reading([&]() -> std::vector<std::string> {
    if (check(H5Lexists(file_->get(), "/tasks/key", H5P_DEFAULT), "H5Lexists", "/tasks/key") <= 0)
      return {};
    const H5Id dataset = open_dataset(file_->get(), "/tasks/key");
    return read_text(dataset.get(), "/tasks/key", all_rows(dataset.get(), "/tasks/key"));
  });
}

std::vector<std::string> ResultsReader::methods() const {
  return file_->reading([&]() -> std::vector<std::string> {
    const H5Id dataset = open_dataset(file_->get(), "/tasks/method");
    return read_text(dataset.get(), "/tasks/method", all_rows(dataset.get(), "/tasks/method"));
  });
}

std::vector<TaskProblem> ResultsReader::problems(TaskStatus status, std::size_t limit) const {
  return file_->reading([&]() -> std::vector<TaskProblem> {
    const std::vector<TaskStatus> all = statuses();
    RowSelection rows;
    for (hsize_t id = 0; id < all.size() && rows.listed.size() < limit; ++id) {
      if (all[id] == status) rows.listed.push_back(id);
    }
    if (rows.listed.empty()) return {};
    const H5Id error = open_dataset(file_->get(), "/tasks/error");
    const H5Id method = open_dataset(file_->get(), "/tasks/method");
    const std::vector<std::string> errors = read_text(error.get(), "/tasks/error", rows);
    const std::vector<std::string> methods = read_text(method.get(), "/tasks/method", rows);
    std::vector<TaskProblem> problems;
    for (std::size_t i = 0; i < rows.listed.size(); ++i) {
      problems.push_back({rows.listed[i], methods[i], status, errors[i]});
    }
    return problems;
  });
}

std::vector<TaskProblem> ResultsReader::warnings(std::size_t limit, std::uint64_t& count) const {
  return file_->reading([&]() -> std::vector<TaskProblem> {
    count = 0;
    std::vector<TaskProblem> found;
    if (check(H5Lexists(file_->get(), "/tasks/warning", H5P_DEFAULT), "H5Lexists",
              "/tasks/warning") <= 0) {
      return found;
    }
    const H5Id warning = open_dataset(file_->get(), "/tasks/warning");
    const H5Id method = open_dataset(file_->get(), "/tasks/method");
    const H5Id status = open_dataset(file_->get(), "/tasks/status");
    constexpr hsize_t kChunk = 4096;  // bounded memory whatever the file's size
    for (hsize_t first = 0; first < task_count_; first += kChunk) {
      const RowSelection rows{first, std::min(kChunk, task_count_ - first), {}};
      const std::vector<std::string> texts = read_text(warning.get(), "/tasks/warning", rows);
      const std::vector<TaskStatus> statuses = read_statuses(status.get(), rows);
      for (std::size_t i = 0; i < texts.size(); ++i) {
        if (texts[i].empty() || statuses[i] == TaskStatus::pending) continue;
        ++count;
        if (found.size() < limit) {
          const RowSelection one{first + i, 1, {}};
          found.push_back({first + i, read_text(method.get(), "/tasks/method", one).at(0),
                           statuses[i], texts[i]});
        }
      }
    }
    return found;
  });
}

std::vector<std::string> ResultsReader::method_groups() const {
  std::vector<std::string> names;
  for (auto& [name, derived] : groups())
    if (!derived) names.push_back(std::move(name));
  return names;
}

std::vector<std::string> ResultsReader::derived_groups() const {
  std::vector<std::string> names;
  for (auto& [name, derived] : groups())
    if (derived) names.push_back(std::move(name));
  return names;
}

std::vector<std::pair<std::string, bool>> ResultsReader::groups() const {
  return file_->reading([&]() -> std::vector<std::pair<std::string, bool>> {
    // Files made since the root tracks creation order list the groups in the schema's order;
    // older ones by name.
    const H5Id root(H5Gopen2(file_->get(), "/", H5P_DEFAULT), H5Gclose, "H5Gopen2", "/");
    const H5Id gcpl(H5Gget_create_plist(root.get()), H5Pclose, "H5Gget_create_plist", "/");
    unsigned order_flags = 0;
    check(H5Pget_link_creation_order(gcpl.get(), &order_flags), "H5Pget_link_creation_order", "/");
    const H5_index_t index =
        (order_flags & H5P_CRT_ORDER_INDEXED) != 0 ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME;
    std::vector<std::string> names;
    hsize_t at = 0;
    check(H5Literate(file_->get(), index, H5_ITER_INC, &at, collect_link_name, &names),
          "H5Literate", "/");
    std::vector<std::pair<std::string, bool>> groups;
    for (std::string& name : names) {
      if (name == "tasks") continue;  // every other member is a group
      const H5Id group(H5Gopen2(file_->get(), name.c_str(), H5P_DEFAULT), H5Gclose, "H5Gopen2",
                       "/" + name);
      const bool derived = has_attribute(group.get(), kDerivedAttribute);
      groups.emplace_back(std::move(name), derived);
    }
    return groups;
  });
}

std::vector<TableColumn> ResultsReader::read_table(const std::string& group,
                                                   std::uint64_t first_row,
                                                   std::uint64_t max_rows) const {
  return file_->reading([&]() -> std::vector<TableColumn> {
    std::vector<std::string> known{"tasks"};
    for (auto& [name, derived] : groups()) known.push_back(std::move(name));
    if (std::find(known.begin(), known.end(), group) == known.end()) {
      std::string list;
      for (const std::string& name : known) list += (list.empty() ? "" : ", ") + name;
      throw InputError(path_ + " has no group '" + group + "' (it has: " + list + ")");
    }
    const std::string group_path = "/" + group;
    const H5Id handle(H5Gopen2(file_->get(), group_path.c_str(), H5P_DEFAULT), H5Gclose, "H5Gopen2",
                      group_path);
    const std::vector<std::string> names = member_names(handle.get(), group_path);
    const std::set<std::string> name_set(names.begin(), names.end());

    std::vector<TableColumn> table;
    for (const std::string& name : names) {
      const std::string path = group_path + "/" + name;
      if (is_ragged_part(name, name_set)) continue;
      const H5Id dataset = open_dataset(file_->get(), path);
      // Named dimensions (`task`, `pmf_index`, ...) hold no values.
      if (check(H5DSis_scale(dataset.get()), "H5DSis_scale", path) > 0) continue;
      const std::vector<hsize_t> dims = dims_of(dataset.get(), path);
      if (dims.size() != 1) continue;  // distributions [rows, width]
      RowSelection rows;
      rows.start = std::min<hsize_t>(first_row, dims[0]);
      rows.count = std::min<hsize_t>(max_rows, dims[0] - rows.start);
      table.push_back(read_column(dataset.get(), path, name, rows));
      if (group != "tasks" && name == "task_id") {
        // The status of each row's task, from /tasks.
        const auto* ids = std::get_if<std::vector<std::int64_t>>(&table.back().values);
        if (ids == nullptr) file_->damaged(path + " does not hold task ids");
        RowSelection tasks;
        for (const std::int64_t id : *ids) tasks.listed.push_back(static_cast<hsize_t>(id));
        const H5Id status = open_dataset(file_->get(), "/tasks/status");
        table.push_back({"status", status_names(read_statuses(status.get(), tasks))});
        // And its warning (files since format version 2), where people plot from.
        if (H5Lexists(file_->get(), "/tasks/warning", H5P_DEFAULT) > 0) {
          const H5Id warning = open_dataset(file_->get(), "/tasks/warning");
          table.push_back(read_column(warning.get(), "/tasks/warning", "warning", tasks));
        }
      }
    }
    return table;
  });
}

StatusCounts count_statuses(const std::vector<TaskStatus>& statuses) {
  StatusCounts counts;
  for (const TaskStatus status : statuses) {
    switch (status) {
      case TaskStatus::pending:
        ++counts.pending;
        break;
      case TaskStatus::done:
        ++counts.done;
        break;
      case TaskStatus::failed:
        ++counts.failed;
        break;
      case TaskStatus::unstable:
        ++counts.unstable;
        break;
    }
  }
  return counts;
}

}  // namespace qsweep::store
