#pragma once
// Subcommands register themselves (one file per command group), so main.cpp stays thin and
// never changes when a command is added.
#include <CLI/CLI.hpp>
#include <cmath>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "qsweep/common/printable.hpp"

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
// Checks with a plain message (CLI11's own ranges print the limits of a double, 310 digits).
// A number > 0 (seconds), or an integer >= 0 (counts).
inline CLI::Validator positive_number(const std::string& what) {
  return CLI::Validator(
      [what](const std::string& text) -> std::string {
        double value = 0.0;
        if (CLI::detail::lexical_cast(text, value) && std::isfinite(value) && value > 0.0)
          return "";
        return "expected " + what + " > 0, not " + printable(text);
      },
      "> 0");
}
// Paths and names (-o, --csv, --group, a command's file): an empty value ('', or "--output="
// as main.cpp passes it) is an error naming the option, never "nothing" or the working directory.
inline CLI::Validator non_empty(const std::string& what) {
  return CLI::Validator(
      [what](const std::string& text) {
        return text.empty() ? "empty value; expected " + what : std::string();
      },
      "");
}
inline CLI::Validator non_negative_integer(const std::string& what) {
  return CLI::Validator(
      [what](const std::string& text) -> std::string {
        long long value = 0;
        if (CLI::detail::lexical_cast(text, value) && value >= 0) return "";
        return "expected " + what + " >= 0 (an integer), not " + printable(text);
      },
      ">= 0");
}

// The command line as typed, for provenance (Linux: /proc/self/cmdline).
inline std::string own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string text, arg;
  while (std::getline(in, arg, '\0')) {
    const bool quote = arg.empty() || arg.find_first_of(" \t\"'$\\") != std::string::npos;
    if (!text.empty()) text += ' ';
    text += quote ? "'" + arg + "'" : arg;
  }
  return text;
}

template <class Args>
std::pair<CLI::App*, Args*> add_file_command(CLI::App& app, int& exit_code, const std::string& name,
                                             const std::string& description,
                                             const std::string& file_help,
                                             int (*run)(const Args&)) {
  auto args = std::make_shared<Args>();
  CLI::App* command = app.add_subcommand(name, description);
  command->add_option("file", args->file, file_help)->required()->check(non_empty(file_help));
  command->callback([args, run, &exit_code] { exit_code = run(*args); });
  return {command, args.get()};
}

}  // namespace qsweep::cli
