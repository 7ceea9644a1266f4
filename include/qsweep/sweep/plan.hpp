#pragma once
// A sweep file parsed, validated and expanded into its task list.
#include <cstdint>
#include <string>
#include <vector>

#include "qsweep/sweep/task.hpp"

namespace qsweep::sweep {

// Refuse plans bigger than this (a typo in a linspace count must not allocate a week of tasks);
// the sweep file may raise it with the top-level key `max_tasks`.
inline constexpr std::uint64_t kDefaultMaxTasks = 10'000'000;

struct Plan {
  std::string name;         // `name:` of the sweep file
  std::string source;       // path as given (for messages)
  std::string yaml_text;    // the file as given (stored in the results file)
  std::string yaml_sha256;  // hex SHA-256 of yaml_text
  std::string hash;         // hex digest of the expanded task list: resume refuses a mismatch
  std::string output;       // `output:` of the file, "" if absent (-o overrides)
  std::uint64_t seed = 0;
  bool on_unstable_error = false;  // `on_unstable: error`
  std::vector<Task> tasks;         // tasks[i].id == i
};

// Reads, validates and expands a sweep file. Throws InputError with a one-line message
// "FILE:LINE:COLUMN: what is wrong; what was expected" for any bad input.
Plan load_plan(const std::string& path);
Plan parse_plan(const std::string& yaml_text, const std::string& source_name);

}  // namespace qsweep::sweep
