#pragma once
// Rows as the bytes the results file stores. The writer encodes rows into these images and
// writes them; the verifier reads the same images back from the file; a row's checksum is a hash
// of its bytes in them. One encoding for both sides, so a checksum made when a row is written can
// be recomputed from the file alone (docs/results-layout.md, "Checksums").
#include <hdf5.h>

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "qsweep/store/hdf5.hpp"
#include "qsweep/store/layout.hpp"
#include "qsweep/sweep/columns.hpp"
#include "qsweep/sweep/execute.hpp"

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

// Writes `data` (elements in row-major order) into the selected rows / reads them into `data`.
void write_ranges(hid_t dataset, hid_t memory_type, const std::vector<Range>& ranges, Shape shape,
                  const void* data, const std::string& name);
void read_range(hid_t dataset, hid_t memory_type, Range range, Shape shape, void* data,
                const std::string& name);

// Fixed-length UTF-8 text, NUL padded (h5py reads it as numpy bytes, 'S<width>').
H5Id text_type(std::size_t width);
// /tasks/status: an HDF5 enum over int8.
H5Id status_type();

// One column of a block of rows, in file layout (native = little-endian on the supported
// platforms; the file types are the little-endian ones).
struct ColumnImage {
  std::vector<unsigned char> bytes;    // the rows' values back to back (ragged: padded to the
                                       // planned length, as in the flat dataset)
  std::vector<std::size_t> row_start;  // rows + 1 offsets into bytes
  std::vector<std::int64_t> counts;    // ragged columns only: real values per row (_count)
  std::span<const unsigned char> row(std::size_t i) const {
    if (row_start[i + 1] == row_start[i]) return {};  // an empty row (maybe of empty bytes)
    return {bytes.data() + row_start[i], row_start[i + 1] - row_start[i]};
  }
};

// The rows `entries` (group row, row values; ascending rows) of one group, column by column.
std::vector<ColumnImage> encode_group_rows(
    const GroupLayout& group,
    const std::vector<std::pair<std::uint64_t, const sweep::Row*>>& entries);

// The memory type a column's image is written and read with (`text` holds a str column's type).
hid_t memory_type(const ColumnLayout& column, const H5Id& text);

// The /tasks columns of a block of rows (all but attempts and checksum), in file layout.
struct TaskColumns {
  std::vector<std::int64_t> id;
  std::vector<char> method;  // rows x kMethodWidth
  std::vector<std::int32_t> block;
  std::vector<std::uint64_t> seed;
  std::vector<std::int8_t> status;
  std::vector<char> error;    // rows x kErrorWidth
  std::vector<char> warning;  // rows x kWarningWidth
  std::vector<double> wall_seconds;
  std::vector<std::int32_t> rank;

  explicit TaskColumns(std::size_t rows);
  std::size_t rows() const { return id.size(); }
  // The columns the plan fixes: id, method, block, seed.
  void set_planned(std::size_t i, const sweep::Task& task);
  // The columns a run writes.
  void set_outcome(std::size_t i, const sweep::TaskOutcome& outcome, int rank);
  // The bytes of the planned columns of row i (for comparing with the plan).
  std::string planned_bytes(std::size_t i) const;
};

// Checksum of row i of `tasks` together with its row `group_row` of the method group's images:
// XXH3-64 of their bytes, never 0 (0 marks a row without a checksum).
std::uint64_t row_checksum(const TaskColumns& tasks, std::size_t i,
                           const std::vector<ColumnImage>& group, std::size_t group_row);

}  // namespace qsweep::store::detail
