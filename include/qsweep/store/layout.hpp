#pragma once
// Where every task's results live in the results file, computed from the plan alone (so every
// rank computes the same layout, and the file can be created at full size before any task runs).
// The format itself is documented in docs/results-layout.md.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "qsweep/sweep/columns.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::store {

inline constexpr const char* kFormatName = "qsweep-results";
// 2: /tasks/checksum and /tasks/warning. Version 1 files are read, not resumed.
inline constexpr int kFormatVersion = 2;
// Fixed-length text (parallel HDF5 cannot write variable-length data): bytes per value.
inline constexpr std::size_t kErrorWidth = 256;    // /tasks/error; longer messages end in "..."
inline constexpr std::size_t kMethodWidth = 16;    // /tasks/method
inline constexpr std::size_t kWarningWidth = 192;  // /tasks/warning; longer ones end in "..."
// Text columns of the method groups are sweep::kMaxStringLength bytes wide.

struct ColumnLayout {
  sweep::ColumnSpec spec;
  // str: bytes per value; f64_vector: values per row (max over the group's planned lengths).
  std::size_t width = 0;
  // f64_ragged, i64_ragged: rows + 1 prefix sums of the planned lengths (row r owns
  // [offsets[r], offsets[r+1]) of the flat dataset); empty for the other types.
  std::vector<std::uint64_t> offsets;
};

struct GroupLayout {
  sweep::Method method = sweep::Method::exact;
  std::string name;                     // "exact", "simulate", "ldp"
  std::vector<std::uint64_t> task_ids;  // task of each row, ascending
  std::vector<ColumnLayout> columns;    // as sweep::group_columns(method)
  std::uint64_t rows() const { return task_ids.size(); }
};

bool is_ragged(sweep::ColumnType type);

class Layout {
 public:
  explicit Layout(const sweep::Plan& plan);

  // Groups of the methods present in the plan, in Method order.
  const std::vector<GroupLayout>& groups() const { return groups_; }
  std::size_t group_index(sweep::Method method) const;
  std::uint64_t row_of(std::uint64_t task_id) const { return row_of_task_[task_id]; }
  std::uint64_t task_count() const { return row_of_task_.size(); }

 private:
  std::vector<GroupLayout> groups_;
  std::array<std::size_t, sweep::kMethodCount> group_of_method_{};
  std::vector<std::uint64_t> row_of_task_;
};

// Bytes that fit in a fixed-length text field of `width` bytes: cut at a UTF-8 character
// boundary, ending in "..." when something was cut.
std::string fit_text(const std::string& text, std::size_t width);

}  // namespace qsweep::store
