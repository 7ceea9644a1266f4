// qsweep: the thin command-line front end. Each subcommand lives in its own file and registers
// itself (command.hpp); this file maps exceptions to the documented exit codes.
#include <algorithm>
#include <cstdio>
#include <exception>

#include "command.hpp"
#include "qsweep/common/error.hpp"
#include "qsweep/common/exit_codes.hpp"
#include "qsweep/version.hpp"

namespace qsweep::cli {

std::vector<std::pair<int, AddCommand>>& registered_commands() {
  static std::vector<std::pair<int, AddCommand>> commands;
  return commands;
}

CommandRegistration::CommandRegistration(int order, AddCommand add) {
  registered_commands().emplace_back(order, std::move(add));
}

}  // namespace qsweep::cli

int main(int argc, char** argv) {
  using namespace qsweep;
  CLI::App app{
      "qsweep: parameter sweeps of queueing models (redundancy scheduling, JSQ) on HPC clusters"};
  app.set_version_flag("--version",
                       std::string("qsweep ") + kVersion + " (git " + kGitCommit + ")");
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 done, 1 runtime error, 2 bad input, 3 some tasks failed, "
      "4 incomplete (resume with --resume).");

  int exit_code = exit_code::ok;
  auto& commands = cli::registered_commands();
  std::stable_sort(commands.begin(), commands.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [order, add] : commands) add(app, exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? exit_code::ok : exit_code::bad_input;
  } catch (const InputError& e) {
    std::fprintf(stderr, "qsweep: error: %s\n", e.what());
    return exit_code::bad_input;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "qsweep: error: %s\n", e.what());
    return exit_code::error;
  }
  return exit_code;
}
