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

// NOLINTNEXTLINE(bugprone-exception-escape): yaml-cpp's Node assignment is not noexcept.
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

// The lists of all tasks together (speeds, types, tree edges, ...) may take at most this much:
// every rank holds the plan.
inline constexpr std::uint64_t kMaxPlanListBytes = std::uint64_t{1} << 30;

struct PlanState {
  std::uint64_t seed = 0;
  bool on_unstable_error = false;
  std::uint64_t max_tasks = 0;
  std::vector<Task> tasks;
  std::vector<std::uint64_t> unstable_tasks;
  std::uint64_t list_bytes = 0;  // of the tasks so far, see kMaxPlanListBytes
};

// Appends the block's tasks (ids continuing the plan) or throws a located InputError.
void expand_block(const BlockInput& block, PlanState& state);

// The number of points of the block's full grid, which must fit in the `room` tasks that
// max_tasks leaves (else a located InputError); reads only the keys and the lengths of their
// values, so a whole sweep is sized before any block is expanded.
std::uint64_t block_grid_size(const BlockInput& block, std::uint64_t room, std::uint64_t max_tasks);

}  // namespace qsweep::sweep::detail
