#pragma once
// Reading the tables of a results file back as the images detail::encode_rows makes (serial,
// read-only): what verification and the copying of finished rows (copy_rows.hpp) read.
#include <hdf5.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "qsweep/store/hdf5.hpp"
#include "qsweep/store/layout.hpp"
#include "row_image.hpp"

namespace qsweep::store::detail {

// Rows read per step (bounds memory: a few MB per step for wide rows).
inline constexpr std::uint64_t kChunkRows = 4096;

// A results file opened to be read (serially, read-only), whose every failure to read means a
// damaged or foreign file: bad input (InputError naming the file and what is wrong), not a
// failing run.
class FileCheck {
 public:
  explicit FileCheck(const std::string& path) : path_(path), file_(open_read_only(path)) {}

  hid_t get() const { return file_.get(); }

  [[noreturn]] void damaged(const std::string& what) const {
    throw InputError(path_ + ": damaged structure: " + what +
                     "; it cannot be verified or resumed (--force starts it again)");
  }

  // Runs `read` (reads of this file), turning HDF5's failures into damaged().
  template <class Read>
  auto reading(Read&& read) const -> decltype(read()) {
    try {
      return read();
    } catch (const StoreError& e) {
      damaged(e.what());
    }
  }

  std::string attribute(const std::string& name) const {
    if (!has_attribute(file_.get(), name)) damaged("no root attribute " + name);
    return reading([&] { return read_attribute_text(file_.get(), name); });
  }

  bool exists(const std::string& object) const {
    return H5Lexists(file_.get(), object.c_str(), H5P_DEFAULT) > 0;
  }

  // Opens a dataset after checking its shape and that its type is of `type_class` and `size`
  // bytes per element.
  H5Id dataset(const std::string& object, const std::vector<hsize_t>& dims, H5T_class_t type_class,
               std::size_t size) const {
    H5Id handle = open(object, dims.size(), type_class, size);
    if (dims_of(handle.get(), object) != dims) damaged(object + " has the wrong size");
    return handle;
  }

  // The length of a 1-D dataset whose type is of `type_class` and `size` bytes per element (0:
  // any size).
  std::uint64_t rows(const std::string& object, H5T_class_t type_class, std::size_t size) const {
    return dims_of(open(object, 1, type_class, size).get(), object).at(0);
  }

 private:
  // Opens a dataset after checking that it is one, of `rank` dimensions and of the type asked.
  H5Id open(const std::string& object, std::size_t rank, H5T_class_t type_class,
            std::size_t size) const {
    if (!exists(object)) damaged("no dataset " + object);
    return reading([&] {
      H5Id handle(H5Dopen2(file_.get(), object.c_str(), H5P_DEFAULT), H5Dclose, "H5Dopen2", object);
      const H5Id space(H5Dget_space(handle.get()), H5Sclose, "H5Dget_space", object);
      if (H5Sget_simple_extent_ndims(space.get()) != static_cast<int>(rank))
        damaged(object + " has the wrong rank");
      const H5Id type(H5Dget_type(handle.get()), H5Tclose, "H5Dget_type", object);
      if (H5Tget_class(type.get()) != type_class || (size != 0 && H5Tget_size(type.get()) != size))
        damaged(object + " has the wrong type");
      return handle;
    });
  }

  std::vector<hsize_t> dims_of(hid_t dataset, const std::string& object) const {
    return reading([&] {
      const H5Id space(H5Dget_space(dataset), H5Sclose, "H5Dget_space", object);
      std::vector<hsize_t> dims(
          static_cast<std::size_t>(std::max(H5Sget_simple_extent_ndims(space.get()), 0)));
      check(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr),
            "H5Sget_simple_extent_dims", object);
      return dims;
    });
  }

  std::string path_;
  H5Id file_;
};

struct ColumnDatasets {
  H5Id data, count;
  H5Id memory_type;
};

// Opens a table's datasets after checking their shapes and types (and a ragged column's
// offsets, which say where every row lives, against the layout's).
std::vector<ColumnDatasets> open_table(const FileCheck& file, const std::string& table,
                                       const std::vector<ColumnLayout>& columns,
                                       std::uint64_t rows);

// The rows [first, first + count) of a table, as detail::encode_rows makes them.
std::vector<ColumnImage> read_rows(const std::string& table,
                                   const std::vector<ColumnLayout>& columns,
                                   std::vector<ColumnDatasets>& datasets, std::uint64_t first,
                                   std::uint64_t count);

}  // namespace qsweep::store::detail
