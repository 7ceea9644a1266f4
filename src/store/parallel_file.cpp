#include "parallel_file.hpp"

#include <H5DSpublic.h>
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstring>

namespace qsweep::store::detail {

// Contiguous, allocated at creation, never filled by HDF5 (qsweep writes every element itself):
// writing a row after creation then changes raw data only, never the file's structure.
H5Id create_dataset(hid_t parent, const std::string& name, hid_t file_type,
                    const std::vector<hsize_t>& dims, const std::string& description,
                    const std::string& units, const std::string& path, bool zero_filled) {
  const H5Id space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose,
                   "H5Screate_simple", path);
  const H5Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "H5Pcreate", path);
  check(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS), "H5Pset_layout", path);
  check(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time", path);
  check(H5Pset_fill_time(dcpl.get(), zero_filled ? H5D_FILL_TIME_ALLOC : H5D_FILL_TIME_NEVER),
        "H5Pset_fill_time", path);
  H5Id dataset(H5Dcreate2(parent, name.c_str(), file_type, space.get(), H5P_DEFAULT, dcpl.get(),
                          H5P_DEFAULT),
               H5Dclose, "H5Dcreate2", path);
  write_string_attribute(dataset.get(), "description", description);
  if (!units.empty()) write_string_attribute(dataset.get(), "units", units);
  return dataset;
}

void check_mpi(int result, std::string_view call, std::string_view what) {
  if (result == MPI_SUCCESS) return;
  std::array<char, MPI_MAX_ERROR_STRING> text{};
  int length = 0;
  MPI_Error_string(result, text.data(), &length);
  throw StoreError(std::string(call) + "(" + std::string(what) +
                   ") failed: " + std::string(text.data(), static_cast<std::size_t>(length)));
}

void broadcast_string(std::string& text, MPI_Comm comm, std::string_view what) {
  auto size = static_cast<unsigned long long>(text.size());
  check_mpi(MPI_Bcast(&size, 1, MPI_UNSIGNED_LONG_LONG, 0, comm), "MPI_Bcast", what);
  text.resize(size);
  if (size > 0) {
    check_mpi(MPI_Bcast(text.data(), static_cast<int>(size), MPI_CHAR, 0, comm), "MPI_Bcast", what);
  }
}

int comm_rank(MPI_Comm comm) {
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank", "results file communicator");
  return rank;
}

int comm_size(MPI_Comm comm) {
  int size = 1;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size", "results file communicator");
  return size;
}

H5Id file_access(MPI_Comm comm, const std::string& path) {
  H5Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "H5Pcreate", path);
  check(H5Pset_fapl_mpio(fapl.get(), comm, MPI_INFO_NULL), "H5Pset_fapl_mpio", path);
  // The HDF5 1.8 format: large attributes (the sweep file) go to dense storage, and unlike the
  // 1.10 format's superblock it does not mark a file that was killed while open as unreadable.
  check(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_V18), "H5Pset_libver_bounds",
        path);
  return fapl;
}

// Groups remember the order their datasets were made in (schema order), so h5py and
// `qsweep export` list columns parameters first, as the schema does.
H5Id create_group(hid_t parent, const std::string& name, const std::string& path) {
  const H5Id gcpl(H5Pcreate(H5P_GROUP_CREATE), H5Pclose, "H5Pcreate", path);
  check(H5Pset_link_creation_order(gcpl.get(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED),
        "H5Pset_link_creation_order", path);
  return H5Id(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT), H5Gclose,
              "H5Gcreate2", path);
}

H5Id open_dataset(hid_t parent, const std::string& name, const std::string& path) {
  return H5Id(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), H5Dclose, "H5Dopen2", path);
}

namespace {

// A named dimension without values of its own (netCDF's "dimension but not a variable": the
// NAME text tells netCDF readers so): a dimension scale dataset of `length` zero bytes.
H5Id create_dimension(hid_t group, const std::string& name, hsize_t length,
                      const std::string& path) {
  H5Id scale = create_dataset(group, name, H5T_STD_I8LE, {length}, "dimension (no values): " + name,
                              "", path, true);
  std::array<char, 80> netcdf_name{};
  std::snprintf(netcdf_name.data(), netcdf_name.size(), "%s%10llu",
                "This is a netCDF dimension but not a netCDF variable.",
                static_cast<unsigned long long>(length));
  check(H5DSset_scale(scale.get(), netcdf_name.data()), "H5DSset_scale", path);
  return scale;
}

void attach(hid_t dataset, hid_t scale, unsigned index, const std::string& path) {
  check(H5DSattach_scale(dataset, scale, index), "H5DSattach_scale", path);
}

}  // namespace

void TableDatasets::attach_rows(hid_t dataset) {
  attach(dataset, task_dimension.get(), 0, "/" + name);
}

void TableDatasets::create(hid_t parent, const std::string& description,
                           const std::vector<ColumnLayout>& layout, std::uint64_t rows) {
  const std::string table_path = "/" + name;
  group = create_group(parent, name, table_path);
  write_string_attribute(group.get(), "description", description);
  const hid_t g = group.get();
  task_dimension = create_dimension(g, row_dimension, rows, table_path + "/" + row_dimension);
  for (const ColumnLayout& column : layout) {
    const ColumnSpec& spec = column.spec;
    const std::string path = table_path + "/" + spec.name;
    ColumnDatasets target;
    target.memory_type = memory_type(column);
    const H5Id type = file_type(column);
    switch (spec.type) {
      case ColumnType::f64_vector:
        target.data =
            create_dataset(g, spec.name, type.get(), {rows, column.width},
                           spec.description + " (one row per task, NaN padding)", spec.units, path);
        attach_rows(target.data.get());
        attach(target.data.get(),
               create_dimension(g, spec.name + "_index", column.width, path + "_index").get(), 1,
               path);
        break;
      case ColumnType::f64_ragged:
      case ColumnType::i64_ragged:
        target.data = create_dataset(g, spec.name, type.get(), {column.offsets.back()},
                                     spec.description + " (ragged: row r's values are [" +
                                         spec.name + "_offset[r], " + spec.name + "_offset[r] + " +
                                         spec.name + "_count[r]) of this flat array)",
                                     spec.units, path);
        target.offset =
            create_dataset(g, spec.name + "_offset", H5T_STD_I64LE, {rows},
                           "start of each row's values in " + spec.name, "", path + "_offset");
        target.count =
            create_dataset(g, spec.name + "_count", H5T_STD_I64LE, {rows},
                           "number of values of each row in " + spec.name, "", path + "_count");
        attach(
            target.data.get(),
            create_dimension(g, spec.name + "_value", column.offsets.back(), path + "_value").get(),
            0, path);
        attach_rows(target.offset.get());
        attach_rows(target.count.get());
        break;
      default:
        target.data =
            create_dataset(g, spec.name, type.get(), {rows}, spec.description, spec.units, path);
        attach_rows(target.data.get());
        break;
    }
    if (!spec.model_units.empty())
      write_string_attribute(target.data.get(), "model_units", spec.model_units);
    write_string_attribute(target.data.get(), "role", spec.parameter ? "parameter" : "result");
    columns.push_back(std::move(target));
  }
}

void TableDatasets::open(hid_t parent, const std::vector<ColumnLayout>& layout) {
  const std::string table_path = "/" + name;
  group = H5Id(H5Gopen2(parent, name.c_str(), H5P_DEFAULT), H5Gclose, "H5Gopen2", table_path);
  for (const ColumnLayout& column : layout) {
    ColumnDatasets target;
    const std::string path = table_path + "/" + column.spec.name;
    target.data = open_dataset(group.get(), column.spec.name, path);
    if (is_ragged(column.spec.type)) {
      target.count = open_dataset(group.get(), column.spec.name + "_count", path + "_count");
    }
    target.memory_type = memory_type(column);
    columns.push_back(std::move(target));
  }
}

void TableDatasets::write(const std::vector<ColumnLayout>& layout,
                          std::span<const std::uint64_t> rows,
                          const std::vector<ColumnImage>& images, std::size_t skip, bool zeroed) {
  const std::vector<Range> row_ranges = ranges_of_rows(rows);
  for (std::size_t c = 0; c < layout.size(); ++c) {
    if (c == skip) continue;
    const ColumnLayout& column = layout[c];
    ColumnDatasets& target = columns[c];
    const std::string path = "/" + name + "/" + column.spec.name;
    const ColumnImage& image = images[c];
    if (is_ragged(column.spec.type)) {
      std::vector<Range> flat_ranges;
      for (const std::uint64_t row : rows) {
        add_range(flat_ranges, column.offsets[row], column.offsets[row + 1] - column.offsets[row]);
      }
      if (zeroed && image.fill_count == 0 && all_zero(image.data(), image.row_start.back())) {
        // its values are zero bytes in the file already
      } else if (image.fill_count > 0) {  // a block of one row: its values, then its fill
        const hsize_t values = image.row_start.back() / 8;
        write_ranges(target.data.get(), target.memory_type.get(), {{flat_ranges[0].start, values}},
                     kOneValue, image.data(), path);
        write_repeated(target.data.get(), target.memory_type.get(), flat_ranges[0].start + values,
                       image.fill_count, image.fill, path);
      } else {
        write_ranges(target.data.get(), target.memory_type.get(), flat_ranges, kOneValue,
                     image.data(), path);
      }
      if (!zeroed || !all_zero(image.counts.data(), image.counts.size() * sizeof(std::int64_t))) {
        write_ranges(target.count.get(), H5T_NATIVE_INT64, row_ranges, kOneValue,
                     image.counts.data(), path + "_count");
      }
    } else {
      const Shape shape =
          column.spec.type == ColumnType::f64_vector ? Shape{true, column.width} : kOneValue;
      if (zeroed && all_zero(image.data(), image.row_start.back())) continue;
      write_ranges(target.data.get(), target.memory_type.get(), row_ranges, shape, image.data(),
                   path);
    }
  }
}

void TableDatasets::handles(std::vector<H5Id*>& all) {
  all.push_back(&group);
  all.push_back(&task_dimension);
  for (ColumnDatasets& column : columns) {
    for (H5Id* handle : {&column.data, &column.offset, &column.count, &column.memory_type}) {
      all.push_back(handle);
    }
  }
}

std::vector<H5Id*> FileDatasets::handles() {
  std::vector<H5Id*> all{&attempts, &checksum};
  tasks.handles(all);
  for (TableDatasets& group : groups) group.handles(all);
  return all;
}

void FileDatasets::close() {
  for (H5Id* handle : handles()) handle->close();
  file.close();
}

void FileDatasets::release() {
  for (H5Id* handle : handles()) handle->release();
  file.release();
}

void FileDatasets::write_attempts(const std::vector<Range>& ranges,
                                  const std::vector<std::int32_t>& values) {
  write_ranges(attempts.get(), H5T_NATIVE_INT32, ranges, kOneValue, values.data(),
               "/tasks/attempts");
}

void FileDatasets::write_checksums(const std::vector<Range>& ranges,
                                   const std::vector<std::uint64_t>& values) {
  write_ranges(checksum.get(), H5T_NATIVE_UINT64, ranges, kOneValue, values.data(),
               "/tasks/checksum");
}

void FileDatasets::write_status(const Layout& layout, const std::vector<Range>& ranges,
                                const std::vector<std::int8_t>& values) {
  const std::size_t c = layout.status_column();
  write_ranges(tasks.columns[c].data.get(), tasks.columns[c].memory_type.get(), ranges, kOneValue,
               values.data(), "/tasks/status");
}

std::vector<hid_t> FileDatasets::written_datasets() const {
  std::vector<hid_t> all{attempts.get(), checksum.get()};
  for (const TableDatasets* table : {&tasks}) {
    for (const ColumnDatasets& column : table->columns)
      for (const H5Id* dataset : {&column.data, &column.offset, &column.count})
        if (dataset->valid()) all.push_back(dataset->get());
  }
  for (const TableDatasets& table : groups) {
    for (const ColumnDatasets& column : table.columns)
      for (const H5Id* dataset : {&column.data, &column.offset, &column.count})
        if (dataset->valid()) all.push_back(dataset->get());
  }
  return all;
}

bool all_zero(const void* data, std::size_t size) {
  if (size == 0) return true;
  const auto* bytes = static_cast<const unsigned char*>(data);
  // Zero at the first byte, and each byte equal to the next one.
  return bytes[0] == 0 && std::memcmp(bytes, bytes + 1, size - 1) == 0;
}

bool zero_raw_data(const std::string& path, const std::vector<hid_t>& datasets, MPI_Comm comm) {
  int zeroed = 0;
  if (comm_rank(comm) == 0) {
    // Raw data only: HDF5 writes no metadata there, and no fill value (H5D_FILL_TIME_NEVER).
    // Bytes a freed piece of metadata may have left in them are zeroed too.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
      zeroed = 1;
      for (const hid_t dataset : datasets) {
        const haddr_t offset = H5Dget_offset(dataset);
        const hsize_t size = H5Dget_storage_size(dataset);
        if (offset == HADDR_UNDEF || size == 0) continue;
        if (fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                      static_cast<off_t>(size)) != 0) {
          zeroed = 0;  // not supported here (or no space): every value is written instead
          break;
        }
      }
      ::close(fd);
    }
  }
  check_mpi(MPI_Bcast(&zeroed, 1, MPI_INT, 0, comm), "MPI_Bcast", "zeroed datasets");
  return zeroed == 1;
}

}  // namespace qsweep::store::detail
