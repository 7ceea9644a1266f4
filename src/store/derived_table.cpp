#include "qsweep/store/derived_table.hpp"

#include <mpi.h>

#include <cstdint>
#include <stdexcept>

#include "derived_columns.hpp"
#include "parallel_file.hpp"
#include "qsweep/store/hdf5.hpp"
#include "qsweep/store/layout.hpp"
#include "row_image.hpp"

namespace qsweep::store {

void write_derived_table(const std::string& path, const DerivedTable& table) {
  const std::vector<ColumnLayout> columns = detail::derived_layouts(table);
  const H5Id fapl = detail::file_access(MPI_COMM_SELF, path);
  H5Id file(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl.get()), H5Fclose, "H5Fopen", path);
  const std::string group_path = "/" + table.name;
  if (check(H5Lexists(file.get(), group_path.c_str(), H5P_DEFAULT), "H5Lexists", group_path) > 0)
    check(H5Ldelete(file.get(), group_path.c_str(), H5P_DEFAULT), "H5Ldelete", group_path);
  {
    detail::TableDatasets datasets;
    datasets.name = table.name;
    datasets.row_dimension = "row";
    const auto rows = static_cast<std::uint64_t>(table.rows.size());
    datasets.create(file.get(), table.description, columns, rows);
    write_string_attribute(datasets.group.get(), kDerivedAttribute,
                           "rows derived from the rows of the method groups, not one per task");
    for (const auto& [name, value] : table.attributes)
      write_string_attribute(datasets.group.get(), name, value);
    if (rows > 0) {
      detail::RowEntries entries;
      std::vector<std::uint64_t> numbers;
      for (std::uint64_t r = 0; r < rows; ++r) {
        entries.emplace_back(r, &table.rows[r]);
        numbers.push_back(r);
      }
      datasets.write(columns, numbers, detail::encode_rows(columns, entries));
    }
    std::vector<H5Id*> handles;
    datasets.handles(handles);
    for (H5Id* handle : handles) handle->close();
  }
  file.close();
}

std::string derived_table_attribute(const std::string& path, const std::string& group,
                                    const std::string& name) {
  try {
    const H5Id file = open_read_only(path);
    const std::string group_path = "/" + group;
    if (check(H5Lexists(file.get(), group_path.c_str(), H5P_DEFAULT), "H5Lexists", group_path) <= 0)
      return "";
    const H5Id handle(H5Gopen2(file.get(), group_path.c_str(), H5P_DEFAULT), H5Gclose, "H5Gopen2",
                      group_path);
    if (!has_attribute(handle.get(), name)) return "";
    return read_attribute_text(handle.get(), name);
  } catch (const StoreError& e) {
    throw InputError(path + ": " + e.what());
  }
}

}  // namespace qsweep::store
