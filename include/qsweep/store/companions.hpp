#pragma once
// The files qsweep makes beside a results file OUT (its companions: OUT.lock, OUT.activity and
// its .new, OUT.partial, OUT.combined and its .partial), and where OUT really is.
#include <string>
#include <string_view>
#include <vector>

#include "qsweep/common/error.hpp"

namespace qsweep::store {

// "<results>.partial": a results file being created, renamed to its name only when complete.
inline constexpr std::string_view kPartialSuffix = ".partial";
// "<results>.combined": a file being grown or merged (made as "<results>.combined.partial").
inline constexpr std::string_view kCombinedSuffix = ".combined";

// Every companion of the results file `results_path`.
std::vector<std::string> companion_paths(const std::string& results_path);

// Where the results file named `path` really is: `path` with the symbolic links of its last
// component followed (the kernel follows those of the directory part), so that its companions,
// the writer lock included, are made beside the real file, and a file resumed or grown through
// a link keeps the link. InputError for a loop of links.
std::string real_results_path(const std::string& path);

// Before anything is written: InputError unless qsweep can make every companion of
// `results_path` (a real_results_path) itself, i.e. each name fits the directory's NAME_MAX
// and none is a symbolic link (qsweep never makes one: a link planted there would make it write
// through it).
void check_companions(const std::string& results_path);

// The refusal of a companion that qsweep did not make (`what`: "a symbolic link", ...).
InputError foreign_companion(const std::string& companion, std::string_view what);

}  // namespace qsweep::store
