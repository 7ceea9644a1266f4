#pragma once
// A table of a results file that is not a method group: rows derived from the file's rows (the
// thresholds a refinement found, /thresholds; docs/results-layout.md), one value per row and
// column, without task ids or checksums. It is written whole, by one process, into a file that no
// run has open: a file being made (grown, merged, or copied to be sealed) before it is renamed to
// the results file, so that a job killed at any moment leaves the old file or the new one whole.
#include <string>
#include <utility>
#include <vector>

#include "qsweep/common/table.hpp"

namespace qsweep::store {

// The attribute that marks a derived table's group (readers list method groups without them).
inline constexpr const char* kDerivedAttribute = "derived";

struct DerivedTable {
  std::string name;  // the group, "thresholds"
  std::string description;
  std::vector<ColumnSpec> columns;  // f64, i64, i32, u64 or str columns
  std::vector<Row> rows;            // cells aligned with the columns
  // Text attributes of the group, besides its description.
  std::vector<std::pair<std::string, std::string>> attributes;
};

// Writes `table` into the results file at `path` (serial HDF5 through MPI-IO on MPI_COMM_SELF:
// MPI must be initialised), replacing a group of that name. Every dataset has the dimension named
// after the rows (`row`). StoreError if the file cannot be written.
void write_derived_table(const std::string& path, const DerivedTable& table);

// "" when the file at `path` holds `table` as it is (the group, its columns in order and every
// byte of every row), else what differs, in a few words. InputError if the file cannot be read.
std::string derived_table_difference(const std::string& path, const DerivedTable& table);

// Text attribute `name` of the group `group` of the file at `path`: "" when the file has no such
// group or the group no such attribute. InputError if the file cannot be read.
std::string derived_table_attribute(const std::string& path, const std::string& group,
                                    const std::string& name);

}  // namespace qsweep::store
