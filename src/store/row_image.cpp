#include "row_image.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace qsweep::store::detail {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <class T>
const T& cell_as(const sweep::CellValue& cell, const sweep::ColumnSpec& spec) {
  const T* value = std::get_if<T>(&cell);
  if (value == nullptr) {
    throw std::logic_error("sweep::make_row gave a value of the wrong type for column " +
                           spec.name);
  }
  return *value;
}

template <class T>
void append_value(std::vector<unsigned char>& bytes, T value) {
  const std::size_t at = bytes.size();
  bytes.resize(at + sizeof(T));
  std::memcpy(bytes.data() + at, &value, sizeof(T));
}

void append_text(std::vector<char>& out, std::size_t i, std::size_t width,
                 const std::string& text) {
  const std::string fitted = fit_text(text, width);
  std::memcpy(out.data() + i * width, fitted.data(), fitted.size());
}

}  // namespace

void add_range(std::vector<Range>& ranges, hsize_t start, hsize_t count) {
  if (count == 0) return;
  if (!ranges.empty() && ranges.back().start + ranges.back().count == start) {
    ranges.back().count += count;
  } else {
    ranges.push_back({start, count});
  }
}

std::vector<Range> ranges_of_rows(std::span<const std::uint64_t> sorted_rows) {
  std::vector<Range> ranges;
  for (const std::uint64_t row : sorted_rows) add_range(ranges, row, 1);
  return ranges;
}

void write_ranges(hid_t dataset, hid_t memory_type, const std::vector<Range>& ranges, Shape shape,
                  const void* data, const std::string& name) {
  const hsize_t width = shape.two_dimensional ? shape.width : 1;
  hsize_t elements = 0;
  for (const Range& range : ranges) elements += range.count * width;
  if (elements == 0) return;
  const H5Id file_space(H5Dget_space(dataset), H5Sclose, "H5Dget_space", name);
  if (ranges.size() == 1) {
    const std::array<hsize_t, 2> start{ranges[0].start, 0};
    const std::array<hsize_t, 2> count{ranges[0].count, width};  // the second only for 2-D
    check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                              nullptr),
          "H5Sselect_hyperslab", name);
  } else {
    // Scattered rows: a point selection costs O(elements), where a union of hyperslabs built
    // one H5S_SELECT_OR at a time costs O(ranges^2) in HDF5 1.10.
    const int rank = shape.two_dimensional ? 2 : 1;
    std::vector<hsize_t> coordinates;
    coordinates.reserve(elements * static_cast<hsize_t>(rank));
    for (const Range& range : ranges) {
      for (hsize_t row = range.start; row < range.start + range.count; ++row) {
        for (hsize_t column = 0; column < width; ++column) {
          coordinates.push_back(row);
          if (rank == 2) coordinates.push_back(column);
        }
      }
    }
    check(H5Sselect_elements(file_space.get(), H5S_SELECT_SET, elements, coordinates.data()),
          "H5Sselect_elements", name);
  }
  const H5Id memory_space(H5Screate_simple(1, &elements, nullptr), H5Sclose, "H5Screate_simple",
                          name);
  check(H5Dwrite(dataset, memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT, data),
        "H5Dwrite", name);
}

void read_range(hid_t dataset, hid_t memory_type, Range range, Shape shape, void* data,
                const std::string& name) {
  const hsize_t width = shape.two_dimensional ? shape.width : 1;
  const hsize_t elements = range.count * width;
  if (elements == 0) return;
  const H5Id file_space(H5Dget_space(dataset), H5Sclose, "H5Dget_space", name);
  const std::array<hsize_t, 2> start{range.start, 0};
  const std::array<hsize_t, 2> count{range.count, width};
  check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                            nullptr),
        "H5Sselect_hyperslab", name);
  const H5Id memory_space(H5Screate_simple(1, &elements, nullptr), H5Sclose, "H5Screate_simple",
                          name);
  check(H5Dread(dataset, memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT, data),
        "H5Dread", name);
}

H5Id text_type(std::size_t width) {
  H5Id type(H5Tcopy(H5T_C_S1), H5Tclose, "H5Tcopy", "text type");
  check(H5Tset_size(type.get(), width), "H5Tset_size", "text type");
  check(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), "H5Tset_strpad", "text type");
  check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "H5Tset_cset", "text type");
  return type;
}

H5Id status_type() {
  H5Id type(H5Tenum_create(H5T_NATIVE_INT8), H5Tclose, "H5Tenum_create", "status type");
  for (const auto status : {sweep::TaskStatus::pending, sweep::TaskStatus::done,
                            sweep::TaskStatus::failed, sweep::TaskStatus::unstable}) {
    const auto value = static_cast<std::int8_t>(status);
    const std::string name(qsweep::name_of(status));
    check(H5Tenum_insert(type.get(), name.c_str(), &value), "H5Tenum_insert", name);
  }
  return type;
}

hid_t memory_type(const ColumnLayout& column, const H5Id& text) {
  switch (column.spec.type) {
    case sweep::ColumnType::f64:
    case sweep::ColumnType::f64_vector:
    case sweep::ColumnType::f64_ragged:
      return H5T_NATIVE_DOUBLE;
    case sweep::ColumnType::i64:
    case sweep::ColumnType::i64_ragged:
      return H5T_NATIVE_INT64;
    case sweep::ColumnType::str:
      return text.get();
  }
  throw std::logic_error("unknown column type");
}

std::vector<ColumnImage> encode_group_rows(
    const GroupLayout& group,
    const std::vector<std::pair<std::uint64_t, const sweep::Row*>>& entries) {
  std::vector<ColumnImage> images(group.columns.size());
  for (std::size_t c = 0; c < group.columns.size(); ++c) {
    const ColumnLayout& column = group.columns[c];
    const sweep::ColumnSpec& spec = column.spec;
    ColumnImage& image = images[c];
    image.row_start.reserve(entries.size() + 1);
    image.row_start.push_back(0);
    for (const auto& [row, values] : entries) {
      const sweep::CellValue& cell = values->cells.at(c);
      switch (spec.type) {
        case sweep::ColumnType::f64:
          append_value(image.bytes, cell_as<double>(cell, spec));
          break;
        case sweep::ColumnType::i64:
          append_value(image.bytes, cell_as<std::int64_t>(cell, spec));
          break;
        case sweep::ColumnType::str: {
          const std::string fitted = fit_text(cell_as<std::string>(cell, spec), column.width);
          const std::size_t at = image.bytes.size();
          image.bytes.resize(at + column.width, 0);
          std::memcpy(image.bytes.data() + at, fitted.data(), fitted.size());
          break;
        }
        case sweep::ColumnType::f64_vector: {
          const auto& values_of_row = cell_as<std::vector<double>>(cell, spec);
          for (std::size_t k = 0; k < column.width; ++k) {
            append_value(image.bytes, k < values_of_row.size() ? values_of_row[k] : kNaN);
          }
          break;
        }
        case sweep::ColumnType::f64_ragged:
        case sweep::ColumnType::i64_ragged: {
          const std::uint64_t reserved = column.offsets[row + 1] - column.offsets[row];
          std::size_t length = 0;
          if (spec.type == sweep::ColumnType::f64_ragged) {
            const auto& v = cell_as<std::vector<double>>(cell, spec);
            length = v.size();
            for (std::uint64_t k = 0; k < reserved; ++k) {
              append_value(image.bytes, k < v.size() ? v[k] : kNaN);
            }
          } else {
            const auto& v = cell_as<std::vector<std::int64_t>>(cell, spec);
            length = v.size();
            for (std::uint64_t k = 0; k < reserved; ++k) {
              append_value(image.bytes, k < v.size() ? v[k] : std::int64_t{-1});
            }
          }
          if (length > reserved) {
            throw std::logic_error("column " + spec.name + " has " + std::to_string(length) +
                                   " values but the plan reserved " + std::to_string(reserved));
          }
          image.counts.push_back(static_cast<std::int64_t>(length));
          break;
        }
      }
      image.row_start.push_back(image.bytes.size());
    }
  }
  return images;
}

TaskColumns::TaskColumns(std::size_t rows)
    : id(rows),
      method(rows * kMethodWidth, '\0'),
      block(rows),
      seed(rows),
      status(rows, static_cast<std::int8_t>(sweep::TaskStatus::pending)),
      error(rows * kErrorWidth, '\0'),
      warning(rows * kWarningWidth, '\0'),
      wall_seconds(rows, kNaN),
      rank(rows, -1) {}

void TaskColumns::set_planned(std::size_t i, const sweep::Task& task) {
  id[i] = static_cast<std::int64_t>(task.id);
  std::fill_n(method.begin() + static_cast<std::ptrdiff_t>(i * kMethodWidth), kMethodWidth, '\0');
  append_text(method, i, kMethodWidth, std::string(qsweep::name_of(task.method())));
  block[i] = task.block;
  seed[i] = task.seed;
}

void TaskColumns::set_outcome(std::size_t i, const sweep::TaskOutcome& outcome, int rank_of_run) {
  status[i] = static_cast<std::int8_t>(outcome.status);
  std::fill_n(error.begin() + static_cast<std::ptrdiff_t>(i * kErrorWidth), kErrorWidth, '\0');
  append_text(error, i, kErrorWidth, outcome.error);
  std::fill_n(warning.begin() + static_cast<std::ptrdiff_t>(i * kWarningWidth), kWarningWidth,
              '\0');
  append_text(warning, i, kWarningWidth, outcome.warning);
  wall_seconds[i] = outcome.wall_seconds;
  rank[i] = rank_of_run;
}

std::string TaskColumns::planned_bytes(std::size_t i) const {
  std::string bytes;
  bytes.append(reinterpret_cast<const char*>(&id[i]), sizeof id[i]);
  bytes.append(method.data() + i * kMethodWidth, kMethodWidth);
  bytes.append(reinterpret_cast<const char*>(&block[i]), sizeof block[i]);
  bytes.append(reinterpret_cast<const char*>(&seed[i]), sizeof seed[i]);
  return bytes;
}

std::uint64_t row_checksum(const TaskColumns& tasks, std::size_t i,
                           const std::vector<ColumnImage>& group, std::size_t group_row) {
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  const auto add = [&state](const void* data, std::size_t size) {
    XXH3_64bits_update(&state, data, size);
  };
  const std::string planned = tasks.planned_bytes(i);
  add(planned.data(), planned.size());
  add(&tasks.status[i], sizeof tasks.status[i]);
  add(tasks.error.data() + i * kErrorWidth, kErrorWidth);
  add(tasks.warning.data() + i * kWarningWidth, kWarningWidth);
  add(&tasks.wall_seconds[i], sizeof tasks.wall_seconds[i]);
  add(&tasks.rank[i], sizeof tasks.rank[i]);
  for (const ColumnImage& image : group) {
    const std::span<const unsigned char> bytes = image.row(group_row);
    add(bytes.data(), bytes.size());
    if (!image.counts.empty()) add(&image.counts[group_row], sizeof image.counts[group_row]);
  }
  const std::uint64_t hash = XXH3_64bits_digest(&state);
  return hash == 0 ? 1 : hash;
}

}  // namespace qsweep::store::detail
