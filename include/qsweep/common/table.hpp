#pragma once
// Tables as the results file stores them: typed columns and rows of cells. The sweep layer
// describes its tables (/tasks and one group per method) with these; the store writes, reads and
// checksums any table so described, knowing nothing of tasks or kernels. docs/results-layout.md
// lists the columns.
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace qsweep {

enum class ColumnType {
  f64,         // one double per row (NaN where not applicable)
  i64,         // one int64 per row (-1 where not applicable)
  str,         // fixed-width text: at most ColumnSpec::width - 1 bytes, NUL terminated
  f64_vector,  // [rows, width] doubles, width = max over the group's tasks, NaN padding
  f64_ragged,  // variable length per row: flat dataset + <name>_offset / <name>_count columns
  i64_ragged,  // as f64_ragged with int64 values (server sets as bitmasks, counts)
  i32,         // one int32 per row (cell: int64)
  u64,         // one uint64 per row (cell: uint64)
  status,      // a task's TaskStatus, an HDF5 enum over int8 (cell: int64)
};

// Width of a str column unless its spec says otherwise (family and policy names, engine names).
inline constexpr std::size_t kMaxStringLength = 32;

struct ColumnSpec {
  std::string name;
  std::string description;
  // UDUNITS-2 text ("1" for a number of the model, "s" for seconds of wall-clock time; "" for
  // text and status columns). sweep::group_columns() and task_columns() set it from the
  // method's unit (docs/results-layout.md, "Units").
  std::string units;
  ColumnType type = ColumnType::f64;
  // A parameter of the task (known from the plan, written at creation), not a result.
  bool parameter = false;
  std::size_t width = kMaxStringLength;  // str: bytes per value
  // Differs from run to run by design (timings, the rank that ran the task): left out where the
  // results of two runs of a task are compared (`qsweep merge`).
  bool per_run = false;
  // The unit in the model's own terms where `units` is "1" for a count or a time: "jobs",
  // "replicas", "jobs^2", "time" (the model's time unit: a mean job size at speed 1) or "1/time";
  // "" otherwise. Written as the dataset's `model_units` attribute.
  std::string model_units{};
};

// An f64_ragged cell of `count` copies of one value: stored as that many values, made only as
// the file is written (a pooled simulation's per-server columns, one value for every server).
struct Repeated {
  double value = 0.0;
  std::uint64_t count = 0;
  bool operator==(const Repeated&) const = default;
};

using CellValue = std::variant<double, std::int64_t, std::string, std::vector<double>,
                               std::vector<std::int64_t>, std::uint64_t, Repeated>;

struct Row {
  std::vector<CellValue> cells;  // aligned with the table's columns
};

}  // namespace qsweep
