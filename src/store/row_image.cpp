#include "row_image.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "qsweep/common/task_status.hpp"

namespace qsweep::store::detail {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <class T>
const T& cell_as(const CellValue& cell, const ColumnSpec& spec) {
  const T* value = std::get_if<T>(&cell);
  if (value == nullptr) {
    throw std::logic_error("a row has a value of the wrong type for column " + spec.name);
  }
  return *value;
}

template <class Narrow>
Narrow narrow(std::int64_t value, const ColumnSpec& spec) {
  if (value < std::numeric_limits<Narrow>::min() || value > std::numeric_limits<Narrow>::max()) {
    throw std::logic_error("value " + std::to_string(value) + " out of range for column " +
                           spec.name);
  }
  return static_cast<Narrow>(value);
}

template <class T>
void append_value(std::vector<unsigned char>& bytes, T value) {
  const std::size_t at = bytes.size();
  bytes.resize(at + sizeof(T));
  std::memcpy(bytes.data() + at, &value, sizeof(T));
}

// Fixed-length UTF-8 text, NUL terminated (at most width - 1 bytes of text, then NULs), so that
// h5dump and netCDF readers show the text without its padding (h5py reads numpy bytes,
// 'S<width>'; .asstr() gives str). Files before this were NUL padded, which reads the same.
H5Id text_type(std::size_t width) {
  H5Id type(H5Tcopy(H5T_C_S1), H5Tclose, "H5Tcopy", "text type");
  check(H5Tset_size(type.get(), width), "H5Tset_size", "text type");
  check(H5Tset_strpad(type.get(), H5T_STR_NULLTERM), "H5Tset_strpad", "text type");
  check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "H5Tset_cset", "text type");
  return type;
}

// A task's status: an HDF5 enum over int8 with the names of TaskStatus.
H5Id status_type() {
  H5Id type(H5Tenum_create(H5T_NATIVE_INT8), H5Tclose, "H5Tenum_create", "status type");
  for (const auto& [status, name_view] : EnumNames<TaskStatus>::table) {
    const auto value = static_cast<std::int8_t>(status);
    const std::string name(name_view);
    check(H5Tenum_insert(type.get(), name.c_str(), &value), "H5Tenum_insert", name);
  }
  return type;
}

H5Id predefined(hid_t type) { return H5Id(H5Tcopy(type), H5Tclose, "H5Tcopy", "column type"); }

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

void write_repeated(hid_t dataset, hid_t memory_type, hsize_t start, std::uint64_t count,
                    const std::array<unsigned char, 8>& value, const std::string& name) {
  constexpr std::uint64_t kPiece = 8192;  // values per write: 64 KiB
  std::vector<std::array<unsigned char, 8>> piece(std::min(count, kPiece), value);
  for (std::uint64_t done = 0; done < count; done += piece.size()) {
    const hsize_t n = std::min<std::uint64_t>(piece.size(), count - done);
    write_ranges(dataset, memory_type, {{start + done, n}}, kOneValue, piece.data(), name);
  }
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

std::size_t row_bytes(const ColumnLayout& column) {
  switch (column.spec.type) {
    case ColumnType::str:
      return column.width;
    case ColumnType::f64_vector:
      return column.width * sizeof(double);
    case ColumnType::i32:
      return sizeof(std::int32_t);
    case ColumnType::status:
      return sizeof(std::int8_t);
    case ColumnType::f64:
    case ColumnType::i64:
    case ColumnType::u64:
    case ColumnType::f64_ragged:
    case ColumnType::i64_ragged:
      return 8;
  }
  throw std::logic_error("unknown column type");
}

H5Id file_type(const ColumnLayout& column) {
  switch (column.spec.type) {
    case ColumnType::f64:
    case ColumnType::f64_vector:
    case ColumnType::f64_ragged:
      return predefined(H5T_IEEE_F64LE);
    case ColumnType::i64:
    case ColumnType::i64_ragged:
      return predefined(H5T_STD_I64LE);
    case ColumnType::i32:
      return predefined(H5T_STD_I32LE);
    case ColumnType::u64:
      return predefined(H5T_STD_U64LE);
    case ColumnType::str:
      return text_type(column.width);
    case ColumnType::status:
      return status_type();
  }
  throw std::logic_error("unknown column type");
}

H5Id memory_type(const ColumnLayout& column) {
  switch (column.spec.type) {
    case ColumnType::f64:
    case ColumnType::f64_vector:
    case ColumnType::f64_ragged:
      return predefined(H5T_NATIVE_DOUBLE);
    case ColumnType::i64:
    case ColumnType::i64_ragged:
      return predefined(H5T_NATIVE_INT64);
    case ColumnType::i32:
      return predefined(H5T_NATIVE_INT32);
    case ColumnType::u64:
      return predefined(H5T_NATIVE_UINT64);
    case ColumnType::str:
      return text_type(column.width);
    case ColumnType::status:
      // The file's enum type: an unknown byte is read as it is, not converted.
      return status_type();
  }
  throw std::logic_error("unknown column type");
}

namespace {

// Bytes of row `row` of a column in its image (ragged: the planned length).
std::size_t image_bytes(const ColumnLayout& column, std::uint64_t row) {
  if (!is_ragged(column.spec.type)) return row_bytes(column);
  return (column.offsets[row + 1] - column.offsets[row]) * 8;
}

template <class T>
std::span<const unsigned char> bytes_of(const std::vector<T>& values) {
  return {reinterpret_cast<const unsigned char*>(values.data()), values.size() * sizeof(T)};
}

template <class T>
std::array<unsigned char, 8> bytes_of(T value) {
  static_assert(sizeof(T) == 8);
  std::array<unsigned char, 8> bytes{};
  std::memcpy(bytes.data(), &value, 8);
  return bytes;
}

// A ragged cell of a block of one row as its values, viewed, then a fill (its padding, or all of
// a Repeated cell); false if it has more values than planned (the copying path says so) or is
// a Repeated cell shorter than planned (then copied).
bool view_ragged(const ColumnLayout& column, std::uint64_t row, const CellValue& cell,
                 ColumnImage& image) {
  const std::uint64_t reserved = column.offsets[row + 1] - column.offsets[row];
  std::uint64_t length = 0;
  if (const auto* repeated = std::get_if<Repeated>(&cell)) {
    if (column.spec.type != ColumnType::f64_ragged || repeated->count != reserved) return false;
    image.fill = bytes_of(repeated->value);
    length = repeated->count;
  } else if (const auto* doubles = std::get_if<std::vector<double>>(&cell);
             doubles && column.spec.type == ColumnType::f64_ragged) {
    image.cell = bytes_of(*doubles);
    image.fill = bytes_of(kNaN);
    length = doubles->size();
  } else if (const auto* ints = std::get_if<std::vector<std::int64_t>>(&cell);
             ints && column.spec.type == ColumnType::i64_ragged) {
    image.cell = bytes_of(*ints);
    image.fill = bytes_of(std::int64_t{-1});
    length = ints->size();
  } else {
    return false;
  }
  if (length > reserved) {
    image.cell = {};
    return false;
  }
  image.fill_count = reserved - image.cell.size() / 8;
  image.row_start.push_back(image.cell.size());
  image.counts.push_back(static_cast<std::int64_t>(length));
  return true;
}

}  // namespace

std::uint64_t reserved_values(const std::vector<ColumnLayout>& columns, std::uint64_t row) {
  std::uint64_t values = 0;
  for (const ColumnLayout& column : columns) {
    if (is_ragged(column.spec.type)) values += column.offsets[row + 1] - column.offsets[row];
  }
  return values;
}

std::vector<ColumnImage> encode_rows(const std::vector<ColumnLayout>& columns,
                                     const RowEntries& entries, Cells cells, const Row* others) {
  std::vector<ColumnImage> images;
  encode_rows(columns, entries, cells, images, others);
  return images;
}

void encode_rows(const std::vector<ColumnLayout>& columns, const RowEntries& entries, Cells cells,
                 std::vector<ColumnImage>& images, const Row* others,
                 const std::vector<bool>* left) {
  images.resize(columns.size());
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const ColumnLayout& column = columns[c];
    const ColumnSpec& spec = column.spec;
    ColumnImage& image = images[c];
    image.bytes.clear();  // the capacities stay
    image.cell = {};
    image.row_start.clear();
    image.counts.clear();
    image.fill = {};
    image.fill_count = 0;
    image.row_start.reserve(entries.size() + 1);
    if (!is_ragged(spec.type)) image.bytes.reserve(entries.size() * row_bytes(column));
    image.row_start.push_back(0);
    if (left != nullptr && (*left)[c]) continue;
    if (cells == Cells::viewed && entries.size() == 1 && is_ragged(spec.type) &&
        view_ragged(
            column, entries.front().first,
            (others != nullptr && !spec.parameter ? others : entries.front().second)->cells.at(c),
            image)) {
      continue;
    }
    std::size_t total = 0;
    for (const auto& entry : entries) total += image_bytes(column, entry.first);
    image.bytes.reserve(total);  // not grown value by value: up to twice the bytes
    for (const auto& [row, values] : entries) {
      const CellValue& cell = (others != nullptr && !spec.parameter ? others : values)->cells.at(c);
      switch (spec.type) {
        case ColumnType::f64:
          append_value(image.bytes, cell_as<double>(cell, spec));
          break;
        case ColumnType::i64:
          append_value(image.bytes, cell_as<std::int64_t>(cell, spec));
          break;
        case ColumnType::i32:
          append_value(image.bytes, narrow<std::int32_t>(cell_as<std::int64_t>(cell, spec), spec));
          break;
        case ColumnType::u64:
          append_value(image.bytes, cell_as<std::uint64_t>(cell, spec));
          break;
        case ColumnType::status:
          append_value(image.bytes, narrow<std::int8_t>(cell_as<std::int64_t>(cell, spec), spec));
          break;
        case ColumnType::str: {
          const std::string& text = cell_as<std::string>(cell, spec);
          const std::size_t at = image.bytes.size();
          image.bytes.resize(at + column.width, 0);
          if (text.size() < column.width) {  // fits as it is (the common case: no copy)
            std::memcpy(image.bytes.data() + at, text.data(), text.size());
          } else {
            const std::string fitted = fit_text(text, column.width - 1);
            std::memcpy(image.bytes.data() + at, fitted.data(), fitted.size());
          }
          break;
        }
        case ColumnType::f64_vector: {
          const auto& values_of_row = cell_as<std::vector<double>>(cell, spec);
          for (std::size_t k = 0; k < column.width; ++k) {
            append_value(image.bytes, k < values_of_row.size() ? values_of_row[k] : kNaN);
          }
          break;
        }
        case ColumnType::f64_ragged:
        case ColumnType::i64_ragged: {
          const std::uint64_t reserved = column.offsets[row + 1] - column.offsets[row];
          std::size_t length = 0;
          if (const auto* repeated = std::get_if<Repeated>(&cell);
              repeated && spec.type == ColumnType::f64_ragged) {
            length = repeated->count;
            for (std::uint64_t k = 0; k < reserved; ++k) {
              append_value(image.bytes, k < repeated->count ? repeated->value : kNaN);
            }
          } else if (spec.type == ColumnType::f64_ragged) {
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
}

namespace {

template <class T>
T value_at(std::span<const unsigned char> bytes, std::size_t k) {
  T value;
  std::memcpy(&value, bytes.data() + k * sizeof(T), sizeof(T));
  return value;
}

template <class T>
std::vector<T> values_of(std::span<const unsigned char> bytes, std::size_t count) {
  std::vector<T> values(count);
  for (std::size_t k = 0; k < count; ++k) values[k] = value_at<T>(bytes, k);
  return values;
}

}  // namespace

Row decode_row(const std::vector<ColumnLayout>& columns, const std::vector<ColumnImage>& images,
               std::size_t i) {
  Row row;
  row.cells.reserve(columns.size());
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const std::span<const unsigned char> bytes = images[c].row(i);
    switch (columns[c].spec.type) {
      case ColumnType::f64:
        row.cells.emplace_back(value_at<double>(bytes, 0));
        break;
      case ColumnType::i64:
        row.cells.emplace_back(value_at<std::int64_t>(bytes, 0));
        break;
      case ColumnType::i32:
        row.cells.emplace_back(std::int64_t{value_at<std::int32_t>(bytes, 0)});
        break;
      case ColumnType::u64:
        row.cells.emplace_back(value_at<std::uint64_t>(bytes, 0));
        break;
      case ColumnType::status:
        row.cells.emplace_back(std::int64_t{value_at<std::int8_t>(bytes, 0)});
        break;
      case ColumnType::str: {
        const auto* text = reinterpret_cast<const char*>(bytes.data());
        row.cells.emplace_back(std::string(text, strnlen(text, bytes.size())));
        break;
      }
      case ColumnType::f64_vector:
        row.cells.emplace_back(values_of<double>(bytes, bytes.size() / sizeof(double)));
        break;
      case ColumnType::f64_ragged:
      case ColumnType::i64_ragged: {
        const std::int64_t count = images[c].counts.at(i);
        if (count < 0 || static_cast<std::size_t>(count) * 8 > bytes.size())
          throw std::logic_error("column " + columns[c].spec.name + " has a row of " +
                                 std::to_string(count) + " values in " +
                                 std::to_string(bytes.size() / 8) + " reserved slots");
        if (columns[c].spec.type == ColumnType::f64_ragged) {
          row.cells.emplace_back(values_of<double>(bytes, static_cast<std::size_t>(count)));
        } else {
          row.cells.emplace_back(values_of<std::int64_t>(bytes, static_cast<std::size_t>(count)));
        }
        break;
      }
    }
  }
  return row;
}

namespace {

// XXH3-64 of bytes given piece by piece: small pieces are gathered and hashed at once (the same
// hash as hashing them one by one, at a fraction of the cost for rows of many small cells),
// large ones streamed, so that a row of a million servers is not copied whole.
class RowHash {
 public:
  RowHash() { gathered_.clear(); }
  void add(std::span<const unsigned char> bytes) {
    if (gathered_.size() + bytes.size() > kGathered) flush();
    if (bytes.size() > kGathered) {
      XXH3_64bits_update(&state_, bytes.data(), bytes.size());
    } else {
      gathered_.insert(gathered_.end(), bytes.begin(), bytes.end());
    }
  }
  void add_repeated(const std::array<unsigned char, 8>& value, std::uint64_t count) {
    for (std::uint64_t k = 0; k < count; ++k) {
      if (gathered_.size() + value.size() > kGathered) flush();
      gathered_.insert(gathered_.end(), value.begin(), value.end());
    }
  }
  std::uint64_t digest() {
    if (!streaming_) return XXH3_64bits(gathered_.data(), gathered_.size());
    flush();
    return XXH3_64bits_digest(&state_);
  }

 private:
  static constexpr std::size_t kGathered = std::size_t{64} * 1024;
  void flush() {
    if (!streaming_) XXH3_64bits_reset(&state_);
    streaming_ = true;
    XXH3_64bits_update(&state_, gathered_.data(), gathered_.size());
    gathered_.clear();
  }
  static thread_local std::vector<unsigned char> gathered_;
  XXH3_state_t state_;
  bool streaming_ = false;
};

thread_local std::vector<unsigned char> RowHash::gathered_;

}  // namespace

std::uint64_t row_checksum(const std::vector<ColumnLayout>& task_columns,
                           const std::vector<ColumnImage>& tasks, std::size_t i,
                           const std::vector<ColumnImage>& group, std::size_t group_row) {
  RowHash hash;
  for (const bool parameters : {true, false}) {
    for (std::size_t c = 0; c < task_columns.size(); ++c) {
      if (task_columns[c].spec.parameter == parameters) hash.add(tasks[c].row(i));
    }
  }
  for (const ColumnImage& image : group) {
    hash.add(image.row(group_row));
    hash.add_repeated(image.fill, image.fill_count);
    if (!image.counts.empty()) {
      hash.add({reinterpret_cast<const unsigned char*>(&image.counts[group_row]),
                sizeof image.counts[group_row]});
    }
  }
  const std::uint64_t digest = hash.digest();
  return digest == 0 ? 1 : digest;
}

}  // namespace qsweep::store::detail
