// qsweep: the thin command-line front end. Each subcommand lives in its own file and registers
// itself (command.hpp); this file maps exceptions to the documented exit codes.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>

#include "command.hpp"
#include "crash_report.hpp"
#include "qsweep/common/allocator.hpp"
#include "qsweep/common/closest_match.hpp"
#include "qsweep/common/error.hpp"
#include "qsweep/common/exit_codes.hpp"
#include "qsweep/common/printable.hpp"
#include "qsweep/version.hpp"

namespace qsweep::cli {

std::vector<std::pair<int, AddCommand>>& registered_commands() {
  static std::vector<std::pair<int, AddCommand>> commands;
  return commands;
}

CommandRegistration::CommandRegistration(int order, AddCommand add) {
  registered_commands().emplace_back(order, std::move(add));
}

namespace {

// `qsweep help [COMMAND]`: the same text as --help.
void add_help_command(CLI::App& app) {
  auto command = std::make_shared<std::string>();
  CLI::App* help = app.add_subcommand("help", "Show the help of qsweep or of one command");
  help->add_option("command", *command, "a command (run, eval, plan, ...)")
      ->check(non_empty("a command name"));
  help->callback([&app, command] {
    if (command->empty()) {  // (app.help() would show the selected subcommand's: this one's)
      std::cout << app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
      return;
    }
    std::vector<std::string> names;
    const CLI::App& all = app;
    for (const CLI::App* sub : all.get_subcommands([](const CLI::App*) { return true; })) {
      if (sub->get_name() == *command) {
        std::cout << sub->help(app.get_name());
        return;
      }
      names.push_back(sub->get_name());
    }
    const std::string guess = closest_match(*command, {names.begin(), names.end()});
    throw InputError("qsweep help: no command '" + printable(*command) + "'" +
                     (guess.empty() ? "" : "; did you mean " + guess + "?") +
                     " (qsweep --help lists them)");
  });
}

// The subcommand chosen on the command line (the app itself if none).
const CLI::App* chosen_command(const CLI::App& app) {
  const CLI::App* chosen = &app;
  for (const CLI::App* sub : app.get_subcommands()) chosen = sub;
  return chosen;
}

// CLI11 says "The following arguments were not expected: 1 --bogus"; this names the command and
// the unknown flag, with the closest flag the command has.
std::string unexpected_arguments(const CLI::App& app, const CLI::ExtrasError& error) {
  const CLI::App* chosen = chosen_command(app);
  std::vector<std::string> flags;
  for (const CLI::Option* option : chosen->get_options())
    for (const std::string& name : option->get_lnames()) flags.push_back("--" + name);
  const std::string where = chosen == &app ? std::string("qsweep") : "qsweep " + chosen->get_name();
  for (const std::string& arg : chosen->remaining()) {
    if (arg.size() < 2 || arg[0] != '-') continue;
    const std::string flag = arg.substr(0, arg.find('='));
    const std::string guess = closest_match(flag, {flags.begin(), flags.end()});
    return where + ": unknown option " + printable(flag) +
           (guess.empty() ? "" : "; did you mean " + guess + "?") + " (" + where +
           " --help lists the options)";
  }
  return where + ": " + printable(error.what()) + " (" + where + " --help shows the usage)";
}

// The program: the commands, their parsing, and the mapping of errors to exit codes.
int main_command(int argc, char** argv) {
  CLI::App app{
      "qsweep: parameter sweeps of queueing models (redundancy scheduling, JSQ) on HPC clusters"};
  app.set_version_flag("-V,--version",
                       std::string("qsweep ") + kVersion + " (git " + git_commit() + ")");
  app.require_subcommand(1);
  // CLI11's messages quote option values as typed: control bytes are shown as \xNN.
  app.failure_message([](const CLI::App* failed, const CLI::Error& e) {
    return CLI::FailureMessage::simple(
        failed, CLI::Error(e.get_name(), printable(e.what()), e.get_exit_code()));
  });

  int exit_code = exit_code::ok;
  auto& commands = cli::registered_commands();
  std::stable_sort(commands.begin(), commands.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [order, add] : commands) add(app, exit_code);
  cli::add_help_command(app);
  // After the commands: CLI11 copies a footer into subcommands made later; each has its own.
  app.footer(
      "Each command's --help lists its exit codes: 0 done, 1 runtime error, 2 bad input "
      "(nothing written), 3 some tasks failed, 4 incomplete (resume with --resume), 5 damaged "
      "rows (verify).");

  // CLI11 reads "--output=" (an empty value) as "--output" and takes the next argument as its
  // value: `--output= -q` wrote a file named -q. It gets the empty value it says instead, which
  // the option's check refuses (command.hpp, non_empty).
  std::vector<std::string> args(argv, argv + argc);
  for (std::size_t i = 1; i < args.size() && args[i] != "--"; ++i) {
    if (args[i].starts_with("--") && args[i].find('=') == args[i].size() - 1) {
      args[i].pop_back();
      args.insert(args.begin() + static_cast<std::ptrdiff_t>(++i), "");
    }
  }
  std::vector<const char*> pointers;
  pointers.reserve(args.size());
  for (const std::string& arg : args) pointers.push_back(arg.c_str());

  try {
    app.parse(static_cast<int>(pointers.size()), pointers.data());
  } catch (const CLI::ExtrasError& e) {
    std::fprintf(stderr, "%s\n", cli::unexpected_arguments(app, e).c_str());
    return exit_code::bad_input;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    const CLI::App* chosen = chosen_command(app);
    const std::string where =
        chosen == &app ? std::string("qsweep") : "qsweep " + chosen->get_name();
    std::fprintf(stderr, "qsweep: error: %s (%s --help shows the usage)\n",
                 printable(e.what()).c_str(), where.c_str());
    return exit_code::bad_input;
  } catch (const InputError& e) {
    std::fprintf(stderr, "qsweep: error: %s\n", e.what());
    return exit_code::bad_input;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "qsweep: error: %s\n", e.what());
    return exit_code::error;
  }
  return exit_code;
}

}  // namespace
}  // namespace qsweep::cli

int main(int argc, char** argv) {
  qsweep::cli::install_crash_report();
  qsweep::fix_malloc_mmap_threshold();  // before anything is allocated: resident sizes as estimated
  try {
    return qsweep::cli::main_command(argc, argv);
  } catch (const std::exception& e) {  // setting up the commands failed (out of memory)
    std::fprintf(stderr, "qsweep: error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "qsweep: error: an unknown exception\n");
  }
  return qsweep::exit_code::error;
}
