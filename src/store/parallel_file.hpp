#pragma once
// The pieces the writer of the results file is made of: MPI-IO file access, datasets allocated
// at creation, and the open handles of a file's tables with the writes of blocks of rows.
#include <hdf5.h>
#include <mpi.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "qsweep/store/hdf5.hpp"
#include "qsweep/store/layout.hpp"
#include "row_image.hpp"

namespace qsweep::store::detail {

// MPI errors are returned (MPI_ERRORS_RETURN) and become exceptions naming the call.
void check_mpi(int result, std::string_view call, std::string_view what);
void broadcast_string(std::string& text, MPI_Comm comm, std::string_view what);
int comm_rank(MPI_Comm comm);
int comm_size(MPI_Comm comm);

// File access through MPI-IO, in the HDF5 1.8 format.
H5Id file_access(MPI_Comm comm, const std::string& path);
// A group that remembers the order its members were made in (schema order).
H5Id create_group(hid_t parent, const std::string& name, const std::string& path);
// A dataset allocated now, contiguous, with its description and units. Not filled by HDF5
// (qsweep writes every element itself) unless `zero_filled`.
H5Id create_dataset(hid_t parent, const std::string& name, hid_t file_type,
                    const std::vector<hsize_t>& dims, const std::string& description,
                    const std::string& units, const std::string& path, bool zero_filled = false);
H5Id open_dataset(hid_t parent, const std::string& name, const std::string& path);

// A column's datasets: its values (the flat values of a ragged column), and for a ragged column
// its _offset and _count.
struct ColumnDatasets {
  H5Id data;
  H5Id offset;  // ragged columns, at creation only
  H5Id count;   // ragged columns
  H5Id memory_type;
};

// The open datasets of one table (/tasks or a group), one per column of its layout.
struct TableDatasets {
  std::string name;                    // "tasks", "exact", ...
  std::string row_dimension = "task";  // the name of the rows' dimension
  H5Id group;
  std::vector<ColumnDatasets> columns;
  H5Id task_dimension;

  // Creates the table's group in `parent` and its datasets for `rows` rows (ragged: the layout's
  // flat length), described by their specs, with their dimension scales (see attach_rows).
  void create(hid_t parent, const std::string& description, const std::vector<ColumnLayout>& layout,
              std::uint64_t rows);
  // Attaches the table's `task` dimension (its rows) to dimension 0 of a dataset of the group
  // made outside create(). Every dataset of a table has named dimensions, so netCDF readers
  // (xarray with h5netcdf) open the group: `task` for rows, `<column>_index` for the second axis
  // of a f64_vector column, `<column>_value` for the flat values of a ragged one.
  void attach_rows(hid_t dataset);
  // Opens them in a file made by create().
  void open(hid_t parent, const std::vector<ColumnLayout>& layout);
  // Writes rows `rows` (ascending) of every column but `skip` (an index, or npos) from their
  // images. `zeroed`: the rows' bytes are zero in the file already (zero_raw_data), so images of
  // zero bytes only are not written.
  void write(const std::vector<ColumnLayout>& layout, std::span<const std::uint64_t> rows,
             const std::vector<ColumnImage>& images, std::size_t skip = npos, bool zeroed = false);
  void handles(std::vector<H5Id*>& all);

  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
};

// Every open object of a results file.
struct FileDatasets {
  H5Id file;  // declared first: destroyed last, after every object in it
  TableDatasets tasks;
  H5Id attempts, checksum;  // the store's own /tasks columns
  std::vector<TableDatasets> groups;

  // Objects first, the file last.
  void close();
  // Without closing (collective in parallel HDF5): this rank is failing.
  void release();
  void write_attempts(const std::vector<Range>& ranges, const std::vector<std::int32_t>& values);
  void write_checksums(const std::vector<Range>& ranges, const std::vector<std::uint64_t>& values);
  // The status column alone (pending rows; the write that precedes a checksum).
  void write_status(const Layout& layout, const std::vector<Range>& ranges,
                    const std::vector<std::int8_t>& values);
  // The datasets whose every value qsweep writes (the values, _count and _offset of every column,
  // attempts, checksum), not the dimension scales.
  std::vector<hid_t> written_datasets() const;

 private:
  std::vector<H5Id*> handles();
};

// Whether `size` bytes at `data` are all zero.
bool all_zero(const void* data, std::size_t size);

// Collective, on a file being created at `path` (no value written yet): rank 0 has the file
// system set the bytes of `datasets` (contiguous, allocated) to zero without writing them
// (fallocate FALLOC_FL_ZERO_RANGE: the blocks are allocated, as a write would, but no page is
// copied), so that the values that are zero bytes need not be written. True on every rank when
// it did; false when the file system cannot (then every value is written as before).
bool zero_raw_data(const std::string& path, const std::vector<hid_t>& datasets, MPI_Comm comm);

}  // namespace qsweep::store::detail
