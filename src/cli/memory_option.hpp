#pragma once
// Memory-size options of the commands (--max-task-memory, --node-memory): SIZE as 4G or 512M,
// checked while the command line is parsed (exit 2); the limit of a task outside MPI (plan,
// validate, eval) is local::memory_limit. docs/running.md, "Memory".
#include <CLI/CLI.hpp>
#include <string>

#include "qsweep/common/error.hpp"
#include "qsweep/sweep/cost.hpp"

namespace qsweep::cli {

inline CLI::Option* add_memory_option(CLI::App* command, const std::string& name, std::string& text,
                                      const std::string& help) {
  return command->add_option(name, text, help)
      ->type_name("SIZE")
      ->check(CLI::Validator(
          [](const std::string& value) {
            try {
              sweep::parse_memory_size(value, "");
              return std::string();
            } catch (const InputError& e) {
              return std::string(e.what());
            }
          },
          "SIZE"));
}

}  // namespace qsweep::cli
