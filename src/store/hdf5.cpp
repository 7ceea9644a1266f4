#include "qsweep/store/hdf5.hpp"

#include <string>
#include <utility>
#include <vector>

namespace qsweep::store {
namespace {

// HDF5 prints its error stack to stderr by default; qsweep reports errors itself, once.
void silence_hdf5_errors() {
  static const bool silenced = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)silenced;
}

herr_t collect_description(unsigned /*n*/, const H5E_error2_t* error, void* data) {
  auto& parts = *static_cast<std::vector<std::string>*>(data);
  if (error->desc != nullptr && error->desc[0] != '\0') parts.emplace_back(error->desc);
  return 0;
}

// The innermost and outermost descriptions of the current error stack (the innermost names the
// cause, e.g. the errno text; the outermost what the call was doing).
std::string hdf5_error_text() {
  std::vector<std::string> parts;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_description, &parts);
  H5Eclear2(H5E_DEFAULT);
  if (parts.empty()) return "unknown HDF5 error";
  if (parts.size() == 1 || parts.front() == parts.back()) return parts.front();
  return parts.back() + ": " + parts.front();
}

[[noreturn]] void fail(std::string_view call, std::string_view object) {
  throw StoreError(std::string(call) + "(" + std::string(object) +
                   ") failed: " + hdf5_error_text());
}

}  // namespace

herr_t check(herr_t result, std::string_view call, std::string_view object) {
  if (result < 0) fail(call, object);
  return result;
}

hid_t check_id(hid_t id, std::string_view call, std::string_view object) {
  if (id < 0) fail(call, object);
  return id;
}

H5Id::H5Id(hid_t id, Closer closer, std::string_view call, std::string_view object)
    : id_(check_id(id, call, object)), closer_(closer), object_(object) {
  silence_hdf5_errors();
}

H5Id::H5Id(H5Id&& other) noexcept
    : id_(std::exchange(other.id_, H5I_INVALID_HID)),
      closer_(other.closer_),
      object_(std::move(other.object_)) {}

H5Id& H5Id::operator=(H5Id&& other) noexcept {
  if (this != &other) {
    if (valid()) closer_(id_);
    id_ = std::exchange(other.id_, H5I_INVALID_HID);
    closer_ = other.closer_;
    object_ = std::move(other.object_);
  }
  return *this;
}

H5Id::~H5Id() {
  if (valid()) closer_(id_);
}

void H5Id::close() {
  if (!valid()) return;
  const hid_t id = std::exchange(id_, H5I_INVALID_HID);
  check(closer_(id), "close", object_);
}

namespace {

H5Id utf8_string_type() {
  H5Id type(H5Tcopy(H5T_C_S1), H5Tclose, "H5Tcopy", "string type");
  check(H5Tset_size(type.get(), H5T_VARIABLE), "H5Tset_size", "string type");
  check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "H5Tset_cset", "string type");
  return type;
}

H5Id scalar_space() {
  return H5Id(H5Screate(H5S_SCALAR), H5Sclose, "H5Screate", "scalar dataspace");
}

}  // namespace

void write_string_attribute(hid_t object, const std::string& name, const std::string& value) {
  silence_hdf5_errors();
  const H5Id type = utf8_string_type();
  const H5Id space = scalar_space();
  const H5Id attribute(
      H5Acreate2(object, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
      "H5Acreate2", name);
  const char* text = value.c_str();
  check(H5Awrite(attribute.get(), type.get(), &text), "H5Awrite", name);
}

void write_int_attribute(hid_t object, const std::string& name, long long value) {
  silence_hdf5_errors();
  const H5Id space = scalar_space();
  const H5Id attribute(
      H5Acreate2(object, name.c_str(), H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
      H5Aclose, "H5Acreate2", name);
  check(H5Awrite(attribute.get(), H5T_NATIVE_LLONG, &value), "H5Awrite", name);
}

namespace {

herr_t find_truncated(unsigned /*n*/, const H5E_error2_t* error, void* data) {
  if (error->min_num == H5E_TRUNCATED) *static_cast<bool*>(data) = true;
  return 0;
}

}  // namespace

H5Id open_read_only(const std::string& path) {
  silence_hdf5_errors();
  const H5Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "H5Pcreate", path);
  check(H5Pset_file_locking(fapl.get(), false, true), "H5Pset_file_locking", path);
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get());
  if (file >= 0) return H5Id(file, H5Fclose, "H5Fopen", path);
  bool truncated = false;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, find_truncated, &truncated);
  const std::string cause = hdf5_error_text();
  // HDF5 refuses a file shorter than it recorded (a copy or a disk that stopped early): h5clear
  // (hdf5-tools) lets it open what the file holds, which verify then checks.
  throw InputError(path + ": cannot open as an HDF5 file (H5Fopen failed: " + cause + ")" +
                   (truncated ? "; it is shorter than HDF5 recorded: `h5clear --increment " + path +
                                    "` opens what it holds (`qsweep verify` then says which "
                                    "rows are intact), or --force starts it again"
                              : ""));
}

bool has_attribute(hid_t object, const std::string& name) {
  silence_hdf5_errors();
  return check(H5Aexists(object, name.c_str()), "H5Aexists", name) > 0;
}

std::string read_attribute_text(hid_t object, const std::string& name) {
  silence_hdf5_errors();
  const H5Id attribute(H5Aopen(object, name.c_str(), H5P_DEFAULT), H5Aclose, "H5Aopen", name);
  const H5Id file_type(H5Aget_type(attribute.get()), H5Tclose, "H5Aget_type", name);
  const H5T_class_t type_class = H5Tget_class(file_type.get());
  if (type_class == H5T_INTEGER) {
    long long value = 0;
    check(H5Aread(attribute.get(), H5T_NATIVE_LLONG, &value), "H5Aread", name);
    return std::to_string(value);
  }
  if (type_class == H5T_FLOAT) {
    double value = 0;
    check(H5Aread(attribute.get(), H5T_NATIVE_DOUBLE, &value), "H5Aread", name);
    return std::to_string(value);
  }
  if (type_class != H5T_STRING) throw StoreError("attribute " + name + " is not text or a number");
  if (H5Tis_variable_str(file_type.get()) > 0) {
    const H5Id type = utf8_string_type();
    char* text = nullptr;
    check(H5Aread(attribute.get(), type.get(), &text), "H5Aread", name);
    std::string value = text != nullptr ? text : "";
    H5free_memory(text);
    return value;
  }
  const std::size_t size = H5Tget_size(file_type.get());
  std::string value(size, '\0');
  check(H5Aread(attribute.get(), file_type.get(), value.data()), "H5Aread", name);
  value.resize(value.find('\0') == std::string::npos ? size : value.find('\0'));
  return value;
}

}  // namespace qsweep::store
