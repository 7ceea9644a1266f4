// Reading a derived table back to compare it (derived_table.hpp).
#include <cstring>

#include "derived_columns.hpp"
#include "qsweep/store/derived_table.hpp"
#include "qsweep/store/hdf5.hpp"
#include "table_reader.hpp"

// After hdf5.h (through hdf5.hpp), which it needs.
#include <H5DSpublic.h>

namespace qsweep::store {
namespace {

herr_t collect_name(hid_t /*group*/, const char* name, const H5L_info_t* /*info*/, void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}

}  // namespace

std::string derived_table_difference(const std::string& path, const DerivedTable& table) {
  const std::vector<ColumnLayout> columns = detail::derived_layouts(table);
  const detail::FileCheck file(path);
  const std::string group_path = "/" + table.name;
  if (!file.exists(group_path)) return "no group " + group_path;
  try {
    // Its datasets, dimensions aside, are the columns in order.
    std::vector<std::string> names;
    file.reading([&] {
      const H5Id group(H5Gopen2(file.get(), group_path.c_str(), H5P_DEFAULT), H5Gclose, "H5Gopen2",
                       group_path);
      std::vector<std::string> all;
      hsize_t at = 0;
      check(H5Literate(group.get(), H5_INDEX_CRT_ORDER, H5_ITER_INC, &at, collect_name, &all),
            "H5Literate", group_path);
      for (const std::string& name : all) {
        const H5Id dataset(H5Dopen2(group.get(), name.c_str(), H5P_DEFAULT), H5Dclose, "H5Dopen2",
                           group_path + "/" + name);
        if (check(H5DSis_scale(dataset.get()), "H5DSis_scale", name) <= 0) names.push_back(name);
      }
    });
    for (std::size_t c = 0; c < columns.size() || c < names.size(); ++c) {
      if (c >= columns.size()) return group_path + " has a column " + names[c] + " more";
      if (c >= names.size() || names[c] != columns[c].spec.name)
        return group_path + " has no column " + columns[c].spec.name + " in its place";
    }
    const auto rows = static_cast<std::uint64_t>(table.rows.size());
    std::vector<detail::ColumnDatasets> datasets =
        detail::open_table(file, table.name, columns, rows);
    const std::vector<detail::ColumnImage> stored =
        file.reading([&] { return detail::read_rows(table.name, columns, datasets, 0, rows); });
    detail::RowEntries entries;
    for (std::uint64_t r = 0; r < rows; ++r) entries.emplace_back(r, &table.rows[r]);
    const std::vector<detail::ColumnImage> expected = detail::encode_rows(columns, entries);
    for (std::uint64_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < columns.size(); ++c) {
        const auto a = stored[c].row(r);
        const auto b = expected[c].row(r);
        if (a.size() != b.size() || (!a.empty() && std::memcmp(a.data(), b.data(), a.size()) != 0))
          return group_path + "/" + columns[c].spec.name + " differs in row " + std::to_string(r);
      }
  } catch (const InputError& e) {  // a shape or type other than the table's
    return e.what();
  }
  return "";
}

}  // namespace qsweep::store
