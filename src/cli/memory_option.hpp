#pragma once
// Memory-size options of the commands (--max-task-memory, --node-memory): SIZE as 4G or 512M,
// checked while the command line is parsed (exit 2), and the limit of a task outside MPI (plan,
// validate, eval: this machine's memory by default). docs/running.md, "Memory".
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "qsweep/common/error.hpp"
#include "qsweep/run/memory.hpp"
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

// --max-task-memory TEXT, or by default the memory of this machine (a task must fit in it
// alone), or this process's address-space limit (ulimit -v) where lower, above what this process
// holds now (the plan loaded).
inline sweep::MemoryLimit local_memory_limit(const std::string& text) {
  sweep::MemoryLimit limit;
  limit.baseline_bytes = run::resident_bytes();
  if (!text.empty()) {
    limit.bytes = sweep::parse_memory_size(text, "--max-task-memory");
    limit.source = "--max-task-memory " + sweep::memory_text(limit.bytes);
    return limit;
  }
  const run::MachineMemory machine = run::machine_memory();
  limit.bytes = machine.bytes;
  std::string source = "this machine's memory (" + machine.source + ")";
  if (const std::optional<run::MachineMemory> address = run::address_space_limit();
      address && address->bytes < limit.bytes) {
    limit.bytes = address->bytes;
    source = address->source;
  }
  limit.source = "the default --max-task-memory " + sweep::memory_text(limit.bytes) + ", " + source;
  return limit;
}

}  // namespace qsweep::cli
