#pragma once
// Subcommands register themselves (one file per command group), so main.cpp stays thin and
// never changes when a command is added.
#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <utility>
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

// Adds subcommand `name` with its arguments, an `Args` that lives as long as the callback; its
// `file` member gets the one positional argument, a required file. The callback runs `run` and
// stores its exit code. Returns the subcommand and its arguments, to add the other options.
template <class Args>
std::pair<CLI::App*, Args*> add_file_command(CLI::App& app, int& exit_code, const std::string& name,
                                             const std::string& description,
                                             const std::string& file_help,
                                             int (*run)(const Args&)) {
  auto args = std::make_shared<Args>();
  CLI::App* command = app.add_subcommand(name, description);
  command->add_option("file", args->file, file_help)->required();
  command->callback([args, run, &exit_code] { exit_code = run(*args); });
  return {command, args.get()};
}

}  // namespace qsweep::cli
