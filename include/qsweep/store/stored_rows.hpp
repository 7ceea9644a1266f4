#pragma once
// Finished rows read back from a results file as cells, to be written into another results file
// at another place: growing a file on `--resume` with a larger plan, and `qsweep merge`
// (docs/running.md, "Growing a study"). The layer that knows the tasks says which row goes where;
// the rows are written with ResultsFile::write_finished, which seals them anew.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "qsweep/store/layout.hpp"

namespace qsweep::store {

struct StoredRow {
  std::uint64_t id = 0;  // task id (row of /tasks) in the file it was read from
  TaskRows rows;         // its cells (a distribution with its NaN padding)
  std::int32_t attempts = 0;
};

// Serial and read-only, on a file whose structure verify_results accepted with `layout`.
class StoredRows {
 public:
  StoredRows(const std::string& path, const Layout& layout);
  StoredRows(const StoredRows&) = delete;
  StoredRows& operator=(const StoredRows&) = delete;
  ~StoredRows();

  // The rows of tasks `ids` (ascending), read a bounded window of rows at a time. A failure to
  // read the file throws InputError naming it (a damaged file), as the constructor does.
  std::vector<StoredRow> read(std::span<const std::uint64_t> ids);

 private:
  std::vector<StoredRow> read_rows(std::span<const std::uint64_t> ids);

  struct Tables;
  const Layout& layout_;
  std::unique_ptr<Tables> tables_;
};

// Row `stored` (cells of the table `columns`) with the parameter cells of `planned`: the same
// results for the row of the same task at another place (its id, block and task_id change).
Row with_parameters(const std::vector<ColumnLayout>& columns, const Row& planned, Row stored);

// The first column of `columns` holding a result (neither a parameter nor per_run) whose cells in
// `a` and `b` differ ("" if none). Numbers compare by their bits (a NaN equals the same NaN);
// values past the end of the shorter distribution must be NaN (the padding of a wider group).
std::string differing_result(const std::vector<ColumnLayout>& columns, const Row& a, const Row& b);

}  // namespace qsweep::store
