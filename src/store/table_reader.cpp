#include "table_reader.hpp"

#include <stdexcept>
#include <utility>

namespace qsweep::store::detail {
namespace {

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

}  // namespace

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

}  // namespace qsweep::store::detail
