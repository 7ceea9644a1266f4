#pragma once
// Subcommands register themselves (one file per command group), so main.cpp stays thin and
// never changes when a command is added.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace qsweep::cli {

// Adds a subcommand to `app`. Its callback runs the command and stores the process exit code
// in `exit_code` (see qsweep/common/exit_codes.hpp); errors are thrown, main maps them.
using AddCommand = std::function<void(CLI::App& app, int& exit_code)>;

struct CommandRegistration {
  CommandRegistration(int order, AddCommand add);
};

// In registration order (order key, then name).
std::vector<std::pair<int, AddCommand>>& registered_commands();

}  // namespace qsweep::cli
