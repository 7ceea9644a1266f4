#pragma once
// The one RAII wrapper for HDF5 identifiers (files, groups, datasets, dataspaces, datatypes,
// property lists, attributes) and the conversion of HDF5 failures into exceptions that name the
// call and the object ("H5Dwrite(/exact/EQ) failed: ...").
#include <hdf5.h>

#include <string>
#include <string_view>

#include "qsweep/common/error.hpp"

namespace qsweep::store {

// A runtime failure of the results file (I/O, HDF5); the CLI maps it to exit code 1.
class StoreError : public Error {
 public:
  using Error::Error;
};

// Throw StoreError "CALL(OBJECT) failed: <HDF5's own description>" when `result` < 0.
herr_t check(herr_t result, std::string_view call, std::string_view object);
hid_t check_id(hid_t id, std::string_view call, std::string_view object);

// Owns one hid_t and the function that closes it. The destructor closes and ignores errors;
// close() reports them.
class H5Id {
 public:
  using Closer = herr_t (*)(hid_t);

  H5Id() = default;
  // Takes ownership of `id` after checking it (throws StoreError naming call and object).
  H5Id(hid_t id, Closer closer, std::string_view call, std::string_view object);
  H5Id(const H5Id&) = delete;
  H5Id& operator=(const H5Id&) = delete;
  H5Id(H5Id&& other) noexcept;
  H5Id& operator=(H5Id&& other) noexcept;
  ~H5Id();

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  void close();
  // Gives up ownership without closing: for a parallel file that an aborting rank must not close
  // (closing is collective and the other ranks are not there).
  void release() { id_ = H5I_INVALID_HID; }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
  std::string object_;  // for messages
};

// Opens an HDF5 file read-only, serially and without HDF5's file lock (reading needs none, and it
// fails on file systems without flock). Throws InputError naming the file if it cannot be opened.
H5Id open_read_only(const std::string& path);

// Variable-length UTF-8 string attributes (scalar), written and read as std::string.
void write_string_attribute(hid_t object, const std::string& name, const std::string& value);
void write_int_attribute(hid_t object, const std::string& name, long long value);
bool has_attribute(hid_t object, const std::string& name);
// Reads a string attribute (variable or fixed length) or an integer attribute as text.
std::string read_attribute_text(hid_t object, const std::string& name);

}  // namespace qsweep::store
