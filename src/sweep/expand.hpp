#pragma once
// Private to the sweep layer: one block of a sweep (from a file or from `qsweep eval` flags)
// expanded into validated tasks.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "qsweep/sweep/task.hpp"
#include "yaml_input.hpp"

namespace qsweep::sweep::detail {

struct Entry {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
  Locator loc;
};

struct BlockInput {
  std::string where;  // location of the block for messages about a whole task
  int index = 0;      // 0-based
  Method method = Method::exact;
  std::vector<Entry> entries;  // every key but method and zip, in order
  std::optional<Entry> zip;
  bool from_flags = false;  // keys are flags: "--eps" rather than "key 'eps'"; one task only
};

struct PlanState {
  std::uint64_t seed = 0;
  bool on_unstable_error = false;
  std::uint64_t max_tasks = 0;
  std::vector<Task> tasks;
  std::vector<std::uint64_t> unstable_tasks;
};

// Appends the block's tasks (ids continuing the plan) or throws a located InputError.
void expand_block(const BlockInput& block, PlanState& state);

}  // namespace qsweep::sweep::detail
