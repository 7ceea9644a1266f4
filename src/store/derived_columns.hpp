#pragma once
// The layout of a derived table's columns (derived_table.hpp), for its writer and its reader.
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "qsweep/store/derived_table.hpp"
#include "qsweep/store/layout.hpp"

namespace qsweep::store::detail {

// Throws std::logic_error for a column that is not one value per row, or a row of another width.
inline std::vector<ColumnLayout> derived_layouts(const DerivedTable& table) {
  std::vector<ColumnLayout> columns;
  for (const ColumnSpec& spec : table.columns) {
    if (spec.type == ColumnType::f64_vector || is_ragged(spec.type) ||
        spec.type == ColumnType::status)
      throw std::logic_error("derived table " + table.name + ": column " + spec.name +
                             " is not one value per row");
    ColumnLayout column{spec, 0, {}};
    if (spec.type == ColumnType::str) column.width = spec.width;
    columns.push_back(std::move(column));
  }
  for (const Row& row : table.rows)
    if (row.cells.size() != columns.size())
      throw std::logic_error("derived table " + table.name + ": a row has " +
                             std::to_string(row.cells.size()) + " cells, the table " +
                             std::to_string(columns.size()) + " columns");
  return columns;
}

}  // namespace qsweep::store::detail
