#pragma once
// Rows as the bytes the results file stores. The writer encodes rows into these images and
// writes them; the verifier reads the same images back from the file; a row's checksum is a hash
// of its bytes in them. One encoding for both sides, so a checksum made when a row is written can
// be recomputed from the file alone (docs/results-layout.md, "Checksums").
#include <hdf5.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "qsweep/store/hdf5.hpp"
#include "qsweep/store/layout.hpp"

namespace qsweep::store::detail {

// [start, start + count) of a dataset's first dimension.
struct Range {
  hsize_t start = 0;
  hsize_t count = 0;
};

// Appends a range, merging it with the last one when they touch.
void add_range(std::vector<Range>& ranges, hsize_t start, hsize_t count);
std::vector<Range> ranges_of_rows(std::span<const std::uint64_t> sorted_rows);

// Rows of a 1-D dataset hold one value; rows of a 2-D dataset `width` values (maybe 0).
struct Shape {
  bool two_dimensional = false;
  hsize_t width = 1;
};
inline constexpr Shape kOneValue{};

// Writes `count` copies of the 8 bytes `value` into elements [start, start + count) of a 1-D
// dataset, in pieces of bounded size.
void write_repeated(hid_t dataset, hid_t memory_type, hsize_t start, std::uint64_t count,
                    const std::array<unsigned char, 8>& value, const std::string& name);

// Writes `data` (elements in row-major order) into the selected rows / reads them into `data`.
void write_ranges(hid_t dataset, hid_t memory_type, const std::vector<Range>& ranges, Shape shape,
                  const void* data, const std::string& name);
void read_range(hid_t dataset, hid_t memory_type, Range range, Shape shape, void* data,
                const std::string& name);

// One column of a block of rows, in file layout (native = little-endian on the supported
// platforms; the file types are the little-endian ones).
struct ColumnImage {
  std::vector<unsigned char> bytes;     // the rows' values back to back (ragged: padded to the
                                        // planned length, as in the flat dataset)
  std::span<const unsigned char> cell;  // instead of bytes: a row's cell, already in file layout
  std::vector<std::size_t> row_start;   // rows + 1 offsets into data()
  std::vector<std::int64_t> counts;     // ragged columns only: real values per row (_count)
  // A ragged row of a block of one row (Cells::viewed) ends in `fill_count` copies of the 8
  // bytes `fill` after its row(0): its padding, or a Repeated cell. They are written and hashed
  // in pieces, never made whole.
  std::array<unsigned char, 8> fill{};
  std::uint64_t fill_count = 0;
  const unsigned char* data() const { return cell.empty() ? bytes.data() : cell.data(); }
  std::span<const unsigned char> row(std::size_t i) const {
    if (row_start[i + 1] == row_start[i]) return {};  // an empty row (maybe of empty bytes)
    return {data() + row_start[i], row_start[i + 1] - row_start[i]};
  }
};

// A block of rows of one table: (row number, its cells), ascending rows.
using RowEntries = std::vector<std::pair<std::uint64_t, const Row*>>;

// Whether images may point into the rows' cells instead of copying them: `viewed` for a block of
// one row, whose ragged cells are not copied (a simulation's per-server columns: 8 bytes per
// server each) and whose padding and Repeated cells are not made (ColumnImage::fill); the rows
// must then outlive the images.
enum class Cells { copied, viewed };

// A group row whose ragged columns reserve more values than this is written alone, from its
// cells (Cells::viewed), not copied into a block's image: a simulation of a million servers
// reserves 4 million.
inline constexpr std::uint64_t kLargeRowValues = 65536;
// Values the ragged columns of a table reserve for a row.
std::uint64_t reserved_values(const std::vector<ColumnLayout>& columns, std::uint64_t row);

// The rows `entries` of a table with `columns`, column by column. With `others`, the cells of
// the columns that are not parameters are its cells, in every row (PlannedRows' pending rows).
std::vector<ColumnImage> encode_rows(const std::vector<ColumnLayout>& columns,
                                     const RowEntries& entries, Cells cells = Cells::copied,
                                     const Row* others = nullptr);
// The same into `images`, whose buffers are kept and reused: a writer that encodes block after
// block does not map and fault in fresh pages for every block (a 4096-row block of a 256-byte
// text column is 1 MiB, a mapping of its own). The images of the columns `left` marks are left
// empty (their bytes are not written).
void encode_rows(const std::vector<ColumnLayout>& columns, const RowEntries& entries, Cells cells,
                 std::vector<ColumnImage>& images, const Row* others = nullptr,
                 const std::vector<bool>* left = nullptr);

// The cells of row i of `images` (read back from the file, or made by encode_rows without a
// fill): the inverse of encode_rows, but for padding: a distribution keeps its NaN padding
// (width values), text ends at its first NUL, and a ragged row holds its _count values.
Row decode_row(const std::vector<ColumnLayout>& columns, const std::vector<ColumnImage>& images,
               std::size_t i);

// Bytes per row of a column that is not ragged (str: its width; f64_vector: width doubles).
std::size_t row_bytes(const ColumnLayout& column);

// The HDF5 type of a column's values in the file, and in memory (the image's layout). Both are
// H5Ids because text and status types are made per column.
H5Id file_type(const ColumnLayout& column);
H5Id memory_type(const ColumnLayout& column);

// Checksum of row i of the /tasks images `tasks` (whose columns are `task_columns`) together
// with its row `group_row` of the method group's images: XXH3-64 of their bytes (the /tasks
// parameters, then its other columns, then the group's columns in order), never 0 (0 marks a row
// without a checksum).
std::uint64_t row_checksum(const std::vector<ColumnLayout>& task_columns,
                           const std::vector<ColumnImage>& tasks, std::size_t i,
                           const std::vector<ColumnImage>& group, std::size_t group_row);

}  // namespace qsweep::store::detail
